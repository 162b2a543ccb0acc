"""Multi-repository workspaces (``paqad workspace``): members given by URL are cloned and indexed
here (``cloned``); searching across the members is ``paqad.search.across``."""
