"""Helpers shared by the test modules (the way pre-commit keeps a ``testing/`` package beside its
tests): real git repositories, recorded host JSON, the agent and MCP drivers, a tiny ONNX model,
local HTTP stubs and the child-process environment. Test modules import from here, never from
one another. ``tests/`` is on ``sys.path`` because pytest's default ``prepend`` import mode puts
the folder of the top ``conftest.py`` there (tests/ has no ``__init__.py``); nothing here ships
in the wheel, which packages only ``paqad/``.
"""
