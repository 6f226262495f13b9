*** Settings ***
Documentation       Index a folder of markdown, Python and text files, then ask for context in
...                 every output format, always within the token budget.
Library             XML
Resource            resources/contextpipe.resource
Suite Setup         A Fresh Project Folder
Suite Teardown      Remove The Project Folder


*** Variables ***
${QUESTION}     how is the token budget split between strategies?
${BUDGET}       300


*** Test Cases ***
Asking Before Anything Is Indexed Says What To Do
    ${error}=    Run contextpipe And Expect Failure    query    ${QUESTION}
    Should Contain    ${error}    no index here
    Should Contain    ${error}    contextpipe index

Indexing A Folder Prints A Summary
    The Example Documents Are In docs/
    ${result}=    Run contextpipe    index    docs/
    Should Contain    ${result.stdout}    3 files seen, 3 indexed, 0 unchanged
    Should Match Regexp    ${result.stdout}    \\d+ fragments written
    Should Match Regexp    ${result.stdout}    store: .*\\.contextpipe \\(\\d+ fragments, \\d+ searchable\\)
    Directory Should Exist    ${PROJECT}/.contextpipe

Indexing An Unchanged Folder Again Does No Work
    ${result}=    Run contextpipe    index    docs/
    Should Contain    ${result.stdout}    3 files seen, 0 indexed, 3 unchanged
    Should Contain    ${result.stdout}    0 fragments written

Indexing Again After A Change Reads Only What Changed
    [Documentation]    Also: binary files are skipped and .gitignore is honoured.
    Append To File    ${PROJECT}/docs/notes.txt    \nThe budget review moved to Friday.\n
    Create Binary File    ${PROJECT}/docs/logo.png    \x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00
    Create File    ${PROJECT}/.gitignore    secret.md\n
    Create File    ${PROJECT}/docs/secret.md    # Secret budget\n\nNever index me.\n
    ${result}=    Run contextpipe    index    docs/
    Should Contain    ${result.stdout}    4 files seen, 1 indexed, 2 unchanged, 0 removed, 1 skipped
    Should Contain    ${result.stdout}    1 binary
    ${context}=    Query As JSON    secret budget    ${BUDGET}
    FOR    ${fragment}    IN    @{context}[fragments]
        Should Not Be Equal    ${fragment}[source][path]    docs/secret.md
        Should Not Be Equal    ${fragment}[source][path]    docs/logo.png
    END

Markdown Output Has A Header With Path And Lines Per Fragment
    ${result}=    Run contextpipe    query    ${QUESTION}    --budget    ${BUDGET}
    Should Match Regexp    ${result.stdout}    (?m)^### docs/guide\\.md:\\d+-\\d+
    Should Match Regexp    ${result.stdout}    (?m)^### docs/allocator\\.py:\\d+-\\d+ · split_budget
    Should Contain    ${result.stdout}    \`\`\`python
    Should Match Regexp    ${result.stderr}    -- \\d+ fragments, \\d+/${BUDGET} tokens \\(o200k_base\\)
    Should Fit In Budget    ${result.stdout}    ${BUDGET}

XML Output Has One Document Element Per Fragment With Source And Lines
    ${result}=    Run contextpipe    query    ${QUESTION}    --budget    ${BUDGET}    --format    xml
    Should Contain    ${result.stdout}    <document source="docs/
    ${documents}=    Parse XML    ${result.stdout}
    Should Be Equal    ${documents.tag}    documents
    ${elements}=    Get Elements    ${documents}    document
    Should Not Be Empty    ${elements}
    FOR    ${document}    IN    @{elements}
        Element Attribute Should Match    ${document}    source    docs/*
        Element Attribute Should Match    ${document}    lines    *-*
    END
    Should Fit In Budget    ${result.stdout}    ${BUDGET}

JSON Output Is The Whole Result Within Budget, With Provenance
    ${context}=    Query As JSON    ${QUESTION}    ${BUDGET}    --strategy    simple-keyword
    Should Be Equal    ${context}[query]    ${QUESTION}
    Should Be Equal As Integers    ${context}[budget]    ${BUDGET}
    Should Be Equal    ${context}[tokenizer]    o200k_base
    Should Be True    0 < ${context}[tokens_used] <= ${BUDGET}
    ${counted}=    Tokens In    ${context}[text]
    Should Be Equal As Integers    ${counted}    ${context}[tokens_used]
    Should Not Be Empty    ${context}[fragments]
    FOR    ${fragment}    IN    @{context}[fragments]
        Dictionary Should Contain Key    ${fragment}    uko_uri
        Should Be True    1 <= ${fragment}[source][start_line] <= ${fragment}[source][end_line]
        ${proposed_by}=    Strategies That Proposed    ${fragment}
        Should Contain    ${proposed_by}    simple-keyword
        Should Start With    ${fragment}[provenance][0][plugin]    contextpipe${SPACE}
        Should Not Be Empty    ${fragment}[provenance][0][reason]
    END
    ${report}=    Report For    ${context}    simple-keyword
    Should Be Equal    ${report}[status]    ok
    Should Be True    ${report}[used_tokens] <= ${report}[allocated_tokens]

A Small Budget Drops Fragments And Says Why
    ${context}=    Query As JSON    budget    120
    Should Be True    ${context}[tokens_used] <= 120
    Should Not Be Empty    ${context}[dropped]
    FOR    ${dropped}    IN    @{context}[dropped]
        Should Not Be Empty    ${dropped}[id]
        Should Not Be Empty    ${dropped}[reason]
    END

Messages Output Is A System Message With The Context, Then The Question
    ${result}=    Run contextpipe    query    ${QUESTION}    --budget    ${BUDGET}
    ...    --format    messages
    ${messages}=    Evaluate    json.loads($result.stdout)    modules=json
    ${count}=    Get Length    ${messages}
    Should Be True    ${count} >= 2
    Should Be Equal    ${messages}[0][role]    system
    Should Match Regexp    ${messages}[0][content]    (?m)^### docs/\\S+:\\d+-\\d+
    Should Be Equal    ${messages}[-1][role]    user
    Should Be Equal    ${messages}[-1][content]    ${QUESTION}
    ${counted}=    Evaluate    "".join(f"{m['role']}\\n{m['content']}\\n" for m in $messages)
    Should Fit In Budget    ${counted}    ${BUDGET}

Search Syntax In A Question Is Read As Plain Words
    ${result}=    Run contextpipe    query    budget" OR NEAR(split * -caps) AND "    --budget    ${BUDGET}
    Should Contain    ${result.stdout}    docs/

A Budget Of Zero Or Less Is A Clear Error
    ${error}=    Run contextpipe And Expect Failure    query    ${QUESTION}    --budget    0
    Should Contain    ${error}    budget must be a positive number of tokens
    ${error}=    Run contextpipe And Expect Failure    query    ${QUESTION}    --budget    -5
    Should Contain    ${error}    budget must be a positive number of tokens

Indexing The Project Folder Keeps What Was Indexed From Elsewhere
    [Documentation]    A folder outside the project is stored under its absolute path;
    ...    indexing the project folder (`index .`) must not take it for a vanished file.
    ${elsewhere}=    Evaluate    tempfile.mkdtemp(prefix="contextpipe-elsewhere-")    modules=tempfile
    Set Suite Variable    ${ELSEWHERE}    ${elsewhere}
    Create File    ${elsewhere}/manual/zeppelin.md    # Zeppelins\n\nThe zeppelin manual.\n
    ${result}=    Run contextpipe    index    ${elsewhere}/manual
    Should Contain    ${result.stdout}    1 files seen, 1 indexed
    ${result}=    Run contextpipe    index    .
    Should Contain    ${result.stdout}    0 removed
    ${context}=    Query As JSON    zeppelin manual    ${BUDGET}
    ${paths}=    Evaluate    [f["source"]["path"] for f in $context["fragments"]]
    Should Contain    ${paths}    ${elsewhere}/manual/zeppelin.md

Forgetting A Root Removes Its Files And Says What It Removed
    ${result}=    Run contextpipe    forget    ${ELSEWHERE}/manual
    Should Match Regexp    ${result.stdout}    ^.*/manual: forgot 1 files, \\d+ fragments$
    ${context}=    Query As JSON    zeppelin manual    ${BUDGET}
    ${paths}=    Evaluate    [f["source"]["path"] for f in $context["fragments"]]
    Should Not Contain    ${paths}    ${ELSEWHERE}/manual/zeppelin.md
    ${error}=    Run contextpipe And Expect Failure    forget    ${ELSEWHERE}/manual
    Should Contain    ${error}    nothing indexed at or under this path
    [Teardown]    Remove Directory    ${ELSEWHERE}    recursive=True

Indexing One File Indexes Only That File
    Create File    ${PROJECT}/notes/todo.txt    Buy more zeppelin fuel.\n
    Create File    ${PROJECT}/notes/later.txt    Sell the zeppelin.\n
    ${result}=    Run contextpipe    index    notes/todo.txt
    Should Match Regexp    ${result.stdout}    ^.*/notes/todo\\.txt: 1 files seen, 1 indexed,

Stores And Virtual Environments In The Tree Are Not Walked, And The Summary Says So
    Create File    ${PROJECT}/tools/env/pyvenv.cfg    home = /usr/bin\n
    Create File    ${PROJECT}/tools/env/lib/site.py    BUDGET = 1\n
    Run contextpipe    --store    tools/old-index    index    notes
    ${result}=    Run contextpipe    index    tools
    Should Contain    ${result.stdout}
    ...    0 files seen, 0 indexed, 0 unchanged, 0 removed, 0 skipped; 2 folders not walked (1 contextpipe store, 1 virtual environment);
