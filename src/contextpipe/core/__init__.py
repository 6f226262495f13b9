"""The ground floor every other room stands on, importing nothing else of contextpipe: the
values that flow through a request (`models`), the errors users see (`errors`), the
formats read and written as plain names (`formats`), structured logging (`logs`) and the
bounded memo tables some readers keep (`_memo`).
"""
