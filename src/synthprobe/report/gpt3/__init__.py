"""The GPT-3 synthetic-tasks section of the report: read, table, figures."""
