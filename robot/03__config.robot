*** Settings ***
Documentation       config.toml: written with its defaults, shown with where each value came
...                 from, and a mistake in it stops the command with one line that says where.
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder
Test Teardown       No Config File


*** Test Cases ***
Config Init Writes A Commented Default Config
    ${result}=    Run contextpipe    config    init
    Should Contain    ${result.stdout}    wrote config.toml
    ${text}=    Get File    ${PROJECT}/config.toml
    Should Contain    ${text}    [budget]
    Should Contain    ${text}    default = 4000
    Should Contain    ${text}    [strategies.simple-keyword]
    Should Match Regexp    ${text}    (?m)^# .+
    ${parsed}=    Evaluate    tomllib.loads($text)    modules=tomllib
    Should Be Equal As Integers    ${parsed}[budget][default]    4000
    # The written defaults are a valid config.
    Run contextpipe    config    show

Config Init Writes The Weight Each Strategy Runs With
    # relevance declares a default weight of 8; a strategy that declares none runs with 1.
    Run contextpipe    config    init
    ${text}=    Get File    ${PROJECT}/config.toml
    ${parsed}=    Evaluate    tomllib.loads($text)    modules=tomllib
    Should Be Equal As Numbers    ${parsed}[strategies][relevance][weight]    8.0
    Should Be Equal As Numbers    ${parsed}[strategies][simple-keyword][weight]    1.0
    Should Be Equal As Numbers    ${parsed}[fusion][rrf_k]    5
    Should Be Equal As Numbers    ${parsed}[packing][mmr_lambda]    1.0

Config Init Does Not Overwrite An Existing File
    A Config File With    [budget]    default = 500
    ${error}=    Run contextpipe And Expect Failure    config    init
    Should Contain    ${error}    already exists
    Should Contain    ${error}    --force
    ${text}=    Get File    ${PROJECT}/config.toml
    Should Contain    ${text}    default = 500
    Run contextpipe    config    init    --force
    ${text}=    Get File    ${PROJECT}/config.toml
    Should Contain    ${text}    default = 4000

Config Show Says Where Each Value Came From
    A Config File With    [budget]    default = 500
    ${result}=    Run contextpipe    config    show
    ${line}=    Line Of Output Containing    ${result.stdout}    budget.default =
    Should Match Regexp    ${line}    ^budget\\.default = 500 +# .*config\\.toml$
    ${line}=    Line Of Output Containing    ${result.stdout}    fusion.rrf_k =
    Should Match Regexp    ${line}    ^fusion\\.rrf_k = 5 +# defaults$
    ${result}=    Run contextpipe    config    show    env:CONTEXTPIPE_BUDGET__DEFAULT=700
    ${line}=    Line Of Output Containing    ${result.stdout}    budget.default =
    Should Match Regexp    ${line}    ^budget\\.default = 700 +# env CONTEXTPIPE_BUDGET__DEFAULT$

Config Show Is Also Available As JSON
    ${result}=    Run contextpipe    config    show    --format    json
    ${items}=    Evaluate    {i["key"]: i for i in json.loads($result.stdout)}    modules=json
    Should Be Equal As Integers    ${items}[budget.default][value]    4000
    Should Be Equal    ${items}[budget.default][source]    defaults

Command Line Beats Environment Beats Config File
    A Config File With    [budget]    default = 500
    ${context}=    Query As JSON    budget    250    env:CONTEXTPIPE_BUDGET__DEFAULT=700
    Should Be Equal As Integers    ${context}[budget]    250
    ${result}=    Run contextpipe    query    budget    --format    json
    ...    env:CONTEXTPIPE_BUDGET__DEFAULT=700
    ${context}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal As Integers    ${context}[budget]    700

A Mistake In The Config Stops The Query With One Line Naming File, Line And Key
    [Template]    This Config Is Refused At The Line Of The Key
    # config.toml                                            line    key    what is allowed
    [budget]\ndefault = 500\ndefualt = 600                     3    budget.defualt    unknown key
    \# budget\n[budget]\ndefault = "lots"                      3    budget.default    valid integer
    [packing]\nmmr_lambda = 1.5                               2    packing.mmr_lambda    less than or equal to 1
    [budget]\ndefault = 0                                     2    budget.default    greater than 0
    [tokenizer]\nname = "gpt2"                                2    tokenizer.name    o200k_base
    [strategies.simple-keyword]\nweight = -1                  2    strategies.simple-keyword.weight    greater than or equal to 0
    [strategies.simple-keyword]\nweight = inf                 2    strategies.simple-keyword.weight    finite number (got inf)
    [packing]\nmin_score = nan                               2    packing.min_score    finite number (got nan)

A Mistake In A Strategy's Options Stops The Query Too
    [Documentation]    The options of a strategy are config like any other: a mistake there
    ...    must not silently leave the request without that strategy.
    This Config Is Refused At The Line Of The Key
    ...    [strategies.simple-keyword.options]\nmax_results = 0
    ...    2    strategies.simple-keyword.options.max_results    greater than or equal to 1

A Config That Is Not TOML Is Refused With One Line
    A Config File With    [budget    default = 500
    ${error}=    Run contextpipe And Expect Failure    query    budget
    Should Contain    ${error}    config.toml: invalid TOML

An Infinite Weight From The Environment Is Refused With One Line
    ${error}=    Run contextpipe And Expect Failure    query    budget
    ...    env:CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT=inf
    Should Contain    ${error}
    ...    env CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT: strategies.simple-keyword.weight: Input should be a finite number (got inf)

A Config File That Is Not UTF-8 Is Refused With One Line Naming Line And Key
    Create File    ${PROJECT}/config.toml    [store]\npath = "données"\n    encoding=latin-1
    ${error}=    Run contextpipe And Expect Failure    query    budget
    Should Contain    ${error}    config.toml:2: store.path: not UTF-8 text (byte 0xe9 at column 13)

An Unknown Strategy Name Is A Warning That Suggests The Installed One
    [Documentation]    Not an error (a plugin may be uninstalled for a while): the query runs,
    ...    and stderr says, in one line, which table does nothing and what was meant.
    A Config File With    [budget]    default = 500    [strategies.simple_keyword]    weight = 2.0
    ${result}=    Run contextpipe    query    budget    --format    json
    ${context}=    Evaluate    json.loads($result.stdout)    modules=json
    Should Be Equal As Integers    ${context}[budget]    500
    Should Not Be Empty    ${context}[fragments]
    ${warning}=    Line Of Output Containing    ${result.stderr}    contextpipe: warning:
    Should Match Regexp    ${warning}
    ...    ^contextpipe: warning: .*config\\.toml:3: strategies\\.simple_keyword: no strategy called 'simple_keyword' is loaded
    Should Contain    ${warning}    did you mean 'simple-keyword'? (loaded: breadth-depth-navigator, recency, relevance, semantic-embedding, simple-keyword, tiered
    Should Not Contain    ${result.stderr}    Traceback

A Config File Named On The Command Line Must Exist
    ${error}=    Run contextpipe And Expect Failure    --config    missing.toml    query    budget
    Should Contain    ${error}    missing.toml: config file not found


*** Keywords ***
This Config Is Refused At The Line Of The Key
    [Arguments]    ${config}    ${line}    ${key}    ${allowed}
    Create File    ${PROJECT}/config.toml    ${config}\n
    ${error}=    Run contextpipe And Expect Failure    query    budget    --budget    200
    Should Contain    ${error}    config.toml:${line}: ${key}:
    Should Contain    ${error}    ${allowed}
    [Teardown]    No Config File
