"""LLM-serving studies: the FIFO vs WSRPT report (:mod:`.cli`; tables and figures in :mod:`.report`)."""
