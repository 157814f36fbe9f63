"""The Deep Arithmark section of the report: read, table, figures."""
