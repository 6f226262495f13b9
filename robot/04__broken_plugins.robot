*** Settings ***
Documentation       A plugin that fails to import, raises in its hook, returns the wrong thing
...                 or fails at query time is reported, and every other strategy still works.
...                 Each plugin is a distribution on PYTHONPATH, as `pip install` would leave it.
Resource            resources/contextpipe.resource
Suite Setup         A Project With The Example Documents Indexed
Suite Teardown      Remove The Project Folder


*** Test Cases ***
A Plugin That Fails To Import Is Listed As Broken With Its Error
    ${site}=    A Plugin Distribution    broken    broken_plugin
    ${result}=    Run contextpipe    strategies    env:PYTHONPATH=${site}
    ${line}=    Line Of Output Containing    ${result.stdout}    contextpipe-broken
    Should Match Regexp    ${line}    \\bbroken\\b.*\\bbroken\\b
    Should Contain    ${line}    import failed: ImportError: this plugin is broken on purpose
    ${line}=    Line Of Output Containing    ${result.stdout}    simple-keyword
    Should Match Regexp    ${line}    \\bok\\b
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    broken
    Should Be Equal    ${row}[distribution]    contextpipe-broken
    Should Be Equal    ${row}[version]    0.1
    Should Be Equal    ${row}[status]    broken
    Should Contain    ${row}[error]    ImportError: this plugin is broken on purpose

Queries Still Work Next To A Broken Plugin
    ${site}=    A Plugin Distribution    broken    broken_plugin
    ${context}=    Query As JSON    budget    300    env:PYTHONPATH=${site}
    Should Not Be Empty    ${context}[fragments]
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    ok

A Plugin Disabled By The Environment Is Listed As Disabled
    ${site}=    A Plugin Distribution    broken    broken_plugin
    ${rows}=    Strategies As JSON
    ...    env:PYTHONPATH=${site}    env:CONTEXTPIPE_DISABLE_PLUGINS=broken
    ${row}=    Row For    ${rows}    broken
    Should Be Equal    ${row}[status]    disabled
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[status]    ok

A Plugin Denied Or Not Allowed In Config Is Listed As Disabled
    ${site}=    A Plugin Distribution    broken    broken_plugin
    A Config File With    [plugins]    deny = ["broken"]
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    broken
    Should Be Equal    ${row}[status]    disabled
    A Config File With    [plugins]    allow = ["simple-keyword"]
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    broken
    Should Be Equal    ${row}[status]    disabled
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[status]    ok
    [Teardown]    No Config File

Without The Plugin On The Path It Is Not Listed
    ${rows}=    Strategies As JSON
    Plugin Should Not Be Listed    ${rows}    broken

A Plugin Whose Hook Raises Is Listed As Broken
    ${site}=    A Plugin Distribution    raising    raising_plugin
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    raising
    Should Be Equal    ${row}[status]    broken
    Should Contain    ${row}[error]    RuntimeError: no strategies today
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[status]    ok

A Plugin Whose Hook Returns Something Else Than Strategies Is Listed As Broken
    ${site}=    A Plugin Distribution    wrong    wrong_plugin
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    wrong
    Should Be Equal    ${row}[status]    broken
    Should Contain    ${row}[error]    name must be a
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[status]    ok

Strategies That Raise Or Hang At Query Time Do Not Fail The Request
    ${site}=    A Plugin Distribution    misbehaving    misbehaving_plugin
    ${started}=    Evaluate    time.monotonic()    modules=time
    ${context}=    Query As JSON    budget    300    --deadline-ms    5000
    ...    env:PYTHONPATH=${site}
    ${elapsed}=    Evaluate    time.monotonic() - ${started}    modules=time
    Should Be True    ${elapsed} < 30    a hanging strategy held the answer for ${elapsed} s
    ${report}=    Report For    ${context}    failing
    Should Be Equal    ${report}[status]    error
    Should Contain    ${report}[reason]    RuntimeError: the failing index is on fire
    ${report}=    Report For    ${context}    hanging
    Should Be Equal    ${report}[status]    timeout
    Should Contain    ${report}[reason]    deadline
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    ok
    Should Not Be Empty    ${context}[fragments]
    Should Be True    ${context}[tokens_used] <= 300

Failing Strategies Are Warned About On Stderr In Text Formats
    ${site}=    A Plugin Distribution    misbehaving    misbehaving_plugin
    ${result}=    Run contextpipe    query    budget    --budget    300    --deadline-ms    5000
    ...    env:PYTHONPATH=${site}
    Should Contain    ${result.stdout}    \### docs/
    Should Contain    ${result.stderr}    contextpipe: warning: failing: error: RuntimeError
    Should Contain    ${result.stderr}    contextpipe: warning: hanging: timeout:

Strategies That Stall In can_handle Or Block Their Event Loop Do Not Hold The Query
    [Documentation]    can_handle sleeps 300 s in one strategy, an async retrieve calls
    ...    time.sleep(300) in the other; the query's deadline is 5 s, which gives the built-in
    ...    strategy's can_handle 500 ms to answer. The bounds below are a tenth of the sleeps:
    ...    however busy the machine, a query that waited for either fails, and one that did
    ...    not passes.
    ${site}=    A Plugin Distribution    stalling    stalling_plugin
    ${started}=    Evaluate    time.monotonic()    modules=time
    ${context}=    Query As JSON    budget    300    --deadline-ms    5000
    ...    env:PYTHONPATH=${site}
    ${elapsed}=    Evaluate    time.monotonic() - ${started}    modules=time
    Should Be True    ${context}[elapsed_ms] < 30000
    ...    the request took ${context}[elapsed_ms] ms against a deadline of 5000 ms
    Should Be True    ${elapsed} < 30    the command took ${elapsed} s
    ${report}=    Report For    ${context}    pondering
    Should Be Equal    ${report}[status]    timeout
    Should Contain    ${report}[reason]    can_handle gave no answer within 500 ms
    Should Be True    ${report}[elapsed_ms] >= 500
    ${report}=    Report For    ${context}    sleepwalking
    Should Be Equal    ${report}[status]    timeout
    Should Contain    ${report}[reason]    blocked its event loop
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    ok
    Should Not Be Empty    ${context}[fragments]

A Plugin Still Loading After The Bound Is Left Out And Listed As Broken
    [Documentation]    Its hook takes 5 s, ten times the bound config.toml sets: the
    ...    commands go on without it.
    ${site}=    A Plugin Distribution    stalled    stalled_plugin
    A Config File With    [plugins]    load_timeout_ms = 500
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    stalled
    Should Be Equal    ${row}[status]    broken
    Should Be Equal    ${row}[error]
    ...    left out: still loading after 500 ms (its import and its hook); every command would wait for it
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be Equal    ${row}[status]    ok
    ${context}=    Query As JSON    budget    300    env:PYTHONPATH=${site}
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    ok
    Should Not Be Empty    ${context}[fragments]
    [Teardown]    No Config File

A KeyboardInterrupt Raised Inside A Plugin Is The Plugin's Error, Not The User's Ctrl-C
    [Documentation]    The query answers, and the plugin's report says what it raised.
    ${site}=    A Plugin Distribution    interrupting    interrupting_plugin
    ${result}=    Run contextpipe    query    budget    --budget    300
    ...    --strategy    interrupting    --strategy    simple-keyword    env:PYTHONPATH=${site}
    Should Contain    ${result.stdout}    \### docs/
    Should Contain    ${result.stderr}
    ...    contextpipe: warning: interrupting: error: KeyboardInterrupt
    Should Not Contain    ${result.stderr}    Aborted!

A Real Ctrl-C Still Stops A Query That Waits For A Plugin
    [Documentation]    SIGINT while a strategy has ten minutes left of its deadline: the
    ...    command stops at once, with click's one word and no traceback.
    ${site}=    A Plugin Distribution    interrupting    interrupting_plugin
    A Config File With    [strategies.waiting]    deadline_ms = 600000
    ${mark}=    Set Variable    ${PROJECT}/waiting-started
    ${handle}=    Start Process    contextpipe    query    budget    --budget    300
    ...    --deadline-ms    600000    --strategy    waiting    --strategy    simple-keyword
    ...    cwd=${PROJECT}    env:PYTHONPATH=${site}    env:CONTEXTPIPE_TEST_WAITING_MARK=${mark}
    Wait Until Created    ${mark}    timeout=60s
    Send Signal To Process    SIGINT    ${handle}
    # A minute is a tenth of what the strategy would keep the query waiting.
    ${result}=    Wait For Process    ${handle}    timeout=60s    on_timeout=kill
    Log Many    exit status ${result.rc}    stdout:\n${result.stdout}    stderr:\n${result.stderr}
    Should Be Equal As Integers    ${result.rc}    1    the query did not stop on SIGINT
    Should Be Equal    ${result.stderr.strip()}    Aborted!
    Should Be Empty    ${result.stdout}
    [Teardown]    No Config File

A Plugin That Is Slow To Load Is Listed With Its Load Time And Warned About
    ${site}=    A Plugin Distribution    slow    slow_plugin
    ${result}=    Run contextpipe    strategies    env:PYTHONPATH=${site}
    ${line}=    Line Of Output Containing    ${result.stdout}    contextpipe-slow
    Should Match Regexp    ${line}    \\b\\d{4,} ms \\(slow\\)
    Should Contain    ${result.stderr}    event='slow plugin'
    Should Contain    ${result.stderr}    plugin='slow'
    Should Contain    ${result.stderr}    load_ms=
    ${rows}=    Strategies As JSON    env:PYTHONPATH=${site}
    ${row}=    Row For    ${rows}    slow
    Should Be True    ${row}[load_ms] >= 1500
    ${row}=    Row For    ${rows}    simple-keyword
    Should Be True    ${row}[load_ms] >= 0
