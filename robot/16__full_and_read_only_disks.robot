*** Settings ***
Documentation       A store on a disk that fills up, or on one that cannot be written, as a user
...                 meets it: each command that cannot do its work says so in one line (no
...                 traceback), nothing already stored is lost, and a read-only store, without
...                 its write-ahead log files, can still be queried. Each disk is real: a tmpfs of
...                 a few hundred kilobytes, or one remounted read-only, mounted over the store's
...                 folder in a mount namespace of its own (resources/on_own_disk.sh), which goes
...                 away with the command.
Resource            resources/contextpipe.resource
Suite Setup         A Project With Its Documents Indexed And Embedded
Suite Teardown      Remove The Project Folder


*** Variables ***
${ON_OWN_DISK}      ${CURDIR}/resources/on_own_disk.sh
${STORE}            .contextpipe


*** Test Cases ***
Indexing On A Full Disk Says So In One Line And Loses Nothing
    [Documentation]    The disk holds the store and 64 kB more: indexing a standard library
    ...    package of a few megabytes fills it. Before, a 52-line traceback ended in
    ...    `cannot rollback - no transaction is active`, which hid the real error.
    ${python}=    Evaluate    sysconfig.get_paths()["stdlib"]    modules=sysconfig
    Copy Directory    ${python}/email    ${PROJECT}/more/email
    ${size}=    Store Size In KiB Plus    64
    ${result}=    Run contextpipe On Its Own Disk    ${size}k    rw    index    more
    Should Be Equal As Integers    ${result.rc}    1    ${result.stdout}${result.stderr}
    Should Be Equal    ${result.stderr.strip()}
    ...    contextpipe: error: ${PROJECT}/${STORE}: the disk is full (database or disk is full); what was saved before is kept: free some space and run the command again
    # The store as the full disk left it, now on a disk with room: whole, what it held before
    # as it was, and the run can be done again.
    ${check}=    Run contextpipe    --store    after    index    --check
    Should Contain    ${check.stdout}    whole (
    ${answer}=    Run contextpipe    --store    after    query    token budget strategies
    ...    --budget    300    --path    docs/*    --format    json
    ${answer}=    Evaluate    json.loads($answer.stdout)    modules=json
    Should Be Equal    ${answer}[fragments]    ${BEFORE}[fragments]
    ${again}=    Run contextpipe    --store    after    index    docs
    Should Contain    ${again.stdout}    docs: 3 files seen, 0 indexed, 3 unchanged
    ${more}=    Run contextpipe    --store    after    index    more
    Should Match Regexp    ${more.stdout}    more: \\d+ files seen, [1-9]\\d* indexed
    [Teardown]    Remove Directory    ${PROJECT}/more    recursive=True

A Read-Only Store Without Its Log Files Can Be Queried, Vectors Included
    [Documentation]    SQLite cannot open a database in write-ahead-log mode without its
    ...    shared-memory file, which cannot be made on a read-only disk: before, every query
    ...    ended in a 39-line traceback (`unable to open database file`).
    File Should Not Exist    ${PROJECT}/${STORE}/index.sqlite3-wal
    File Should Not Exist    ${PROJECT}/${STORE}/index.sqlite3-shm
    ${result}=    Run contextpipe On Its Own Disk    1m    ro
    ...    query    token budget strategies    --budget    300    --format    json
    Should Not Contain    ${result.stderr}    Traceback
    Should Be Equal As Integers    ${result.rc}    0    ${result.stderr}
    Should Be Empty    ${result.stderr}
    ${answer}=    Evaluate    json.loads($result.stdout)    modules=json
    ${all}=    Query As JSON    token budget strategies    300
    Should Be Equal    ${answer}[fragments]    ${all}[fragments]
    ${semantic}=    Evaluate    [s for s in $answer["strategies"] if s["name"] == "semantic-embedding"][0]
    Should Be Equal    ${semantic}[status]    ok    ${semantic}

A Read-Only Store With The Log Files A Query Left Answers Every Reading Command
    [Documentation]    A query leaves the (empty) log files behind: SQLite reads them.
    Query As JSON    token budget strategies    300
    File Should Exist    ${PROJECT}/${STORE}/index.sqlite3-shm
    FOR    ${command}    IN
    ...    query|token budget|--budget|300|--session|s1
    ...    index|--check
    ...    graph|stats
        ${args}=    Split String    ${command}    |
        ${result}=    Run contextpipe On Its Own Disk    1m    ro    @{args}
        Should Be Equal As Integers    ${result.rc}    0    ${command}: ${result.stderr}
        Should Not Be Empty    ${result.stdout}
    END

Commands That Write Say In One Line That A Read-Only Store Cannot Be Written
    FOR    ${command}    IN
    ...    index|docs
    ...    remember|a note|--session|s1
    ...    pin|docs/guide.md
    ...    forget|docs/notes.txt
    ...    index|--rebuild|docs
        ${args}=    Split String    ${command}    |
        ${result}=    Run contextpipe On Its Own Disk    1m    ro    @{args}
        Should Be Equal As Integers    ${result.rc}    1    ${command}: ${result.stdout}
        Should Be One Line    ${result.stderr}
        Should Match Regexp    ${result.stderr}
        ...    ^contextpipe: error: ${PROJECT}/${STORE}: (the store cannot be written|cannot be moved aside)
    END
    ${check}=    Run contextpipe    --store    after    index    --check
    Should Contain    ${check.stdout}    whole (


*** Keywords ***
A Project With Its Documents Indexed And Embedded
    [Documentation]    The example documents, indexed and embedded with wordllama (fast), the
    ...    answer to one query about docs/, kept as ${BEFORE}, and no log files left.
    A Fresh Project Folder
    The Example Documents Are In docs/
    A Config File With    [embedding]    model = "wordllama"
    Run contextpipe    index    docs
    ${before}=    Query As JSON    token budget strategies    300    --path    docs/*
    Should Not Be Empty    ${before}[fragments]
    Set Suite Variable    ${BEFORE}    ${before}
    # A query leaves its log files behind; the last writer to finish removes them.
    Run contextpipe    index    docs

Store Size In KiB Plus
    [Arguments]    ${more}
    ${size}=    Evaluate
    ...    sum(f.stat().st_size for f in pathlib.Path($PROJECT, $STORE).iterdir()) // 1024 + ${more}
    ...    modules=pathlib
    RETURN    ${size}

Run contextpipe On Its Own Disk
    [Documentation]    `contextpipe ARGS` with the project's store on a disk of its own of
    ...    SIZE, read-only when MODE is ro (see on_own_disk.sh); the store as that disk left it
    ...    is then in after/ (the project's store is as it was).
    [Arguments]    ${size}    ${mode}    @{args}
    Remove Directory    ${PROJECT}/after    recursive=True
    ${result}=    Run Process    ${ON_OWN_DISK}    ${size}    ${mode}    ${PROJECT}/${STORE}
    ...    ${PROJECT}/after    contextpipe    @{args}    cwd=${PROJECT}    timeout=120s
    ...    on_timeout=kill
    Log Many    exit status ${result.rc}    stdout:\n${result.stdout}    stderr:\n${result.stderr}
    Should Be True    ${result.rc} < 90    the disk could not be made: ${result.stderr}
    RETURN    ${result}
