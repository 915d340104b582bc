"""Markdown tables for the generated docs pages and reports (one renderer, no ``tabulate`` dependency)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def markdown_table(
    df: pd.DataFrame, floatfmt: str = ".2f", nan: str = "—", index: bool = False, align_numbers: bool = False
) -> str:
    """``df`` as a GitHub Markdown pipe table.

    Args:
        df: the table (column names become the header).
        floatfmt: format spec of float cells (e.g. ``".3g"``, ``",.2f"``).
        nan: text of a non-finite float cell.
        index: include a named index as the first column(s).
        align_numbers: right-align numeric columns (``---:``).
    """
    d = df.reset_index() if index and (df.index.name or any(df.index.names)) else df

    def cell(v: Any) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (float, np.floating)):
            return nan if not np.isfinite(v) else format(float(v), floatfmt)
        return str(v).replace("|", "\\|")

    def rule(c: Any) -> str:
        numeric = pd.api.types.is_numeric_dtype(d[c]) and not pd.api.types.is_bool_dtype(d[c])
        return "---:" if align_numbers and numeric else "---"

    head = "| " + " | ".join(str(c) for c in d.columns) + " |"
    sep = "|" + "|".join(rule(c) for c in d.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join([head, sep, *body])


__all__ = ["markdown_table"]
