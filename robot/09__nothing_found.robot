*** Settings ***
Documentation       A query that finds nothing says why on stderr, in one line, instead of
...                 printing a blank line: an empty store, every strategy skipped, filters
...                 that match nothing, or a budget too small for anything found.
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder


*** Test Cases ***
An Empty Store Says It Holds Nothing
    Create Directory    ${PROJECT}/empty
    ${result}=    Run contextpipe    --store    empty-store    index    empty
    Should Contain    ${result.stdout}    0 files seen
    ${result}=    Run contextpipe    --store    empty-store    query    budget
    Nothing Was Printed But    ${result}    holds no fragments; index something first

Every Strategy Skipped Says Which And Why
    ${result}=    Run contextpipe    query    budget
    ...    env:CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__ENABLED=false
    ...    env:CONTEXTPIPE_STRATEGIES__SEMANTIC_EMBEDDING__ENABLED=false
    ...    env:CONTEXTPIPE_STRATEGIES__RELEVANCE__ENABLED=false
    ...    env:CONTEXTPIPE_STRATEGIES__RECENCY__ENABLED=false
    ...    env:CONTEXTPIPE_STRATEGIES__TIERED__ENABLED=false
    ...    env:CONTEXTPIPE_STRATEGIES__BREADTH_DEPTH_NAVIGATOR__ENABLED=false
    Nothing Was Printed But    ${result}    no strategy ran (breadth-depth-navigator: skipped, disabled in config; recency: skipped, disabled in config; relevance: skipped, disabled in config; semantic-embedding: skipped, disabled in config; simple-keyword: skipped, disabled in config; tiered: skipped, disabled in config)

Filters That Match Nothing Say So
    ${result}=    Run contextpipe    query    budget    --path    nowhere/*
    Nothing Was Printed But    ${result}
    ...    no strategy found anything for this query within the --path and --kind filters

A Budget Too Small For Anything Found Says What Was Left Out
    ${result}=    Run contextpipe    query    budget    --budget    4
    Nothing Was Printed But    ${result}    candidates were left out (the first: budget:


*** Keywords ***
Nothing Was Printed But
    [Documentation]    stdout is empty; stderr's first line explains why, in these words.
    [Arguments]    ${result}    ${words}
    Should Be Empty    ${result.stdout}
    ${first}=    Get Line    ${result.stderr}    0
    Should Start With    ${first}    contextpipe: no context:
    Should Contain    ${first}    ${words}
