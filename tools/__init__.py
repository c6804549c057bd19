"""LLM-callable tools: one file per tool, the file named for the tool."""
