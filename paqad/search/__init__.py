"""The single search pipeline: query analysis, lexical candidates, evidence, results."""
