Feature: Configuration
  Every tunable lives in config.toml, read with tomllib and validated by pydantic. A
  mistake stops with one line naming the file, the line, the key and what is allowed.
  Values come from, in order of precedence: the command line, `CONTEXTPIPE_SECTION__KEY`
  environment variables, the project's config.toml, and the defaults; `config show`
  says where each value came from. `config init` writes every default with a comment.

  Scenario Outline: A mistake in config.toml stops with one line naming file, line and key (<mistake>)
    Given the project config file:
      """
      # contextpipe settings for this project

      [<section>]
      <setting> = <value>
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:4: <key>: <what>"
    And the error starts with the path of the config file followed by ":4:"

    Examples:
      | mistake              | section                    | setting      | value             | key                              | what                                                  |
      | unknown key          | packing                    | mmr_lamda    | 0.5               | packing.mmr_lamda                | unknown key                                           |
      | wrong type           | budget                     | default      | "lots"            | budget.default                   | Input should be a valid integer                        |
      | number written as text | budget                   | default      | "4000"            | budget.default                   | Input should be a valid integer (got '4000')          |
      | wrong type of list   | plugins                    | deny         | "simple-keyword"  | plugins.deny                     | Input should be a valid list                           |
      | not a boolean        | strategies.simple-keyword  | enabled      | "maybe"           | strategies.simple-keyword.enabled | Input should be a valid boolean                       |
      | above the maximum    | packing                    | mmr_lambda   | 1.5               | packing.mmr_lambda               | Input should be less than or equal to 1 (got 1.5)     |
      | below the minimum    | strategies.simple-keyword  | weight       | -1                | strategies.simple-keyword.weight | Input should be greater than or equal to 0 (got -1)   |
      | zero deadline        | executor                   | deadline_ms  | 0                 | executor.deadline_ms             | Input should be greater than 0 (got 0)                |
      | model window as text | models."small-model"       | window       | "large"           | models.small-model.window        | Input should be a valid integer                        |

  Scenario: An unknown store backend stops the pipeline with one line naming the installed ones
    Given the project config file:
      """
      # contextpipe settings for this project

      [store]
      backend = "postgres"
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:4: store.backend: unknown store backend 'postgres'; installed: embedded"
    And the error starts with the path of the config file followed by ":4:"

  Scenario Outline: A number that is not finite is refused (<value> for <section>.<setting>)
    Given the project config file:
      """
      [<section>]
      <setting> = <value>
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:2: <section>.<setting>: Input should be a finite number (got <value>)"

    Examples:
      | section                   | setting      | value |
      | strategies.simple-keyword | weight       | inf   |
      | strategies.simple-keyword | weight       | nan   |
      | packing                   | min_score    | inf   |
      | packing                   | mmr_lambda   | nan   |

  Scenario: No numeric setting accepts infinity or NaN
    When every numeric setting is written in turn as inf, -inf and nan in config.toml
    Then each is refused with one line naming the file, the line, the key and the value

  Scenario: An infinite weight from the environment names the variable
    Given the environment variable CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT is "inf"
    When the pipeline is opened
    Then loading fails with the one-line error "env CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT: strategies.simple-keyword.weight: Input should be a finite number (got inf)"

  Scenario: A request's weight for a strategy must be a finite number too
    Given the sample documentation is indexed
    When I ask for "how is the budget split?" within 300 tokens giving "simple-keyword" the weight inf
    Then the assembly fails with ContextpipeError saying "request strategies.simple-keyword.weight: Input should be a finite number (got inf)"

  Scenario: A config.toml that is not UTF-8 names the line, the key and the byte
    Given the project config file, saved as Latin-1:
      """
      [store]
      path = "données"
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:2: store.path: not UTF-8 text (byte 0xe9 at column 13); save the file as UTF-8"

  Scenario: A config.toml saved with a byte-order mark reads like any other
    Given the project config file, saved as UTF-8 with a byte-order mark:
      """
      [budget]
      default = 1200
      """
    When the configuration is loaded
    Then "budget.default" is 1200 from "config.toml"

  Scenario Outline: A strategy name that no installed strategy has is a warning (<mistake>)
    # Not an error: a plugin may be uninstalled for a while, its settings kept for later.
    Given the project config file:
      """
      [budget]
      default = 1200

      [strategies.<name>]
      weight = 2.0
      """
    When the pipeline is opened
    Then it opens, warning "config.toml:4: strategies.<name>: no strategy called '<name>' is loaded, so these settings do nothing<hint> (loaded: breadth-depth-navigator, recency, relevance, semantic-embedding, simple-keyword, tiered)"
    And the warning is logged as an "unknown strategy" event naming "<name>"

    Examples:
      | mistake       | name           | hint                             |
      | underscore    | simple_keyword | ; did you mean 'simple-keyword'? |
      | typo          | simple-keywrod | ; did you mean 'simple-keyword'? |
      | nothing close | vector-search  |                                  |

  Scenario: An unknown strategy written as a dotted key is named with its line
    Given the project config file:
      """
      budget.default = 1200
      strategies.simple_keyword.weight = 2.0
      """
    When the pipeline is opened
    Then it opens, warning "config.toml:2: strategies.simple_keyword: no strategy called 'simple_keyword' is loaded"

  Scenario: An unknown strategy set from the environment is a warning naming the variable
    Given the environment variable CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWRD__WEIGHT is "2"
    When the pipeline is opened
    Then it opens, warning "env CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWRD__WEIGHT: strategies.simple-keywrd: no strategy called 'simple-keywrd' is loaded"

  Scenario: The warning names the plugins that did not load
    Given the project config file:
      """
      [plugins]
      deny = ["simple-keyword", "relevance", "semantic-embedding", "recency", "tiered", "breadth-depth-navigator"]

      [strategies.simple-keyword]
      weight = 2.0
      """
    When the pipeline is opened
    Then it opens, warning "config.toml:4: strategies.simple-keyword: no strategy called 'simple-keyword' is loaded, so these settings do nothing (loaded: none; plugins not loaded: breadth-depth-navigator (disabled), recency (disabled), relevance (disabled), semantic-embedding (disabled), simple-keyword (disabled), tiered (disabled))"

  Scenario: Settings of an installed strategy give no warning
    Given the project config file:
      """
      [strategies.simple-keyword]
      weight = 2.0
      """
    When the pipeline is opened
    Then it opens without a warning

  Scenario: An unknown section is named with its line
    Given the project config file:
      """
      [budget]
      default = 1200

      [pakcing]
      mmr_lambda = 0.5
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:4: pakcing: unknown key"

  Scenario: A mistake written as a dotted key still names its line
    Given the project config file:
      """
      # contextpipe settings for this project
      budget.default = 1200
      packing.mmr_lambda = 2
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml:3: packing.mmr_lambda: Input should be less than or equal to 1 (got 2)"

  Scenario: Invalid TOML is reported with the file
    Given the project config file:
      """
      [packing
      mmr_lambda = 0.5
      """
    When the configuration is loaded
    Then loading fails with the one-line error "config.toml: invalid TOML"

  Scenario: A mistake in an environment variable names the variable
    Given the environment variable CONTEXTPIPE_BUDGET__DEFAULT is "-5"
    When the configuration is loaded
    Then loading fails with the one-line error "env CONTEXTPIPE_BUDGET__DEFAULT: budget.default: Input should be greater than 0 (got -5)"

  Scenario: An environment variable for an unknown key is refused
    Given the environment variable CONTEXTPIPE_PAKCING__MMR_LAMBDA is "0.5"
    When the configuration is loaded
    Then loading fails with the one-line error "env CONTEXTPIPE_PAKCING__MMR_LAMBDA: pakcing: unknown key"

  Scenario: A mistake on the command line says so
    Given the setting "packing.mmr_lambda" is 7
    When the configuration is loaded
    Then loading fails with the one-line error "command line: packing.mmr_lambda: Input should be less than or equal to 1 (got 7)"

  Scenario: Opening a pipeline with a bad config stops with the same one-line error
    Given the project config file:
      """
      [packing]
      mmr_lamda = 0.5
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:2: packing.mmr_lamda: unknown key"

  Scenario Outline: Precedence: <winner> wins
    Given <file>
    And <environment>
    And <command line>
    When the configuration is loaded
    Then "budget.default" is <value> from "<winner>"
    And "packing.mmr_lambda" is 1.0 from "defaults"

    Examples:
      | winner                          | value | file                                      | environment                                                   | command line                               |
      | defaults                        | 4000  | no project config file                    | no environment variable                                       | no command-line setting                    |
      | config.toml                     | 1000  | a project config file with a budget of 1000 | no environment variable                                     | no command-line setting                    |
      | env CONTEXTPIPE_BUDGET__DEFAULT | 2000  | a project config file with a budget of 1000 | the environment variable CONTEXTPIPE_BUDGET__DEFAULT is "2000" | no command-line setting                  |
      | command line                    | 3000  | a project config file with a budget of 1000 | the environment variable CONTEXTPIPE_BUDGET__DEFAULT is "2000" | the setting "budget.default" is 3000     |
      | command line                    | 3000  | no project config file                    | no environment variable                                       | the setting "budget.default" is 3000       |

  Scenario: Strategy settings can come from the environment
    Given the environment variable CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT is "2.5"
    When the configuration is loaded
    Then "strategies.simple-keyword.weight" is 2.5 from "env CONTEXTPIPE_STRATEGIES__SIMPLE_KEYWORD__WEIGHT"
    And "strategies.simple-keyword.cap_fraction" is 1.0 from "defaults"

  Scenario: The effective configuration lists every key with its value and source
    Given a project config file with a budget of 1000
    When the configuration is loaded
    Then every effective key is listed once, with its value and where it came from
    And "budget.default" is 1000 from "config.toml"
    And "tokenizer.name" is "o200k_base" from "defaults"

  Scenario: The default config.toml round-trips through tomllib
    When I generate the default config.toml
    Then it reads back with tomllib as exactly the default settings

  Scenario: The repository's config.toml is exactly what `config init` writes
    When I generate the default config.toml
    Then it is exactly the config.toml at the root of the repository

  Scenario: A typo in a strategy's own options stops with file, line and key
    Given the project config file:
      """
      [strategies.simple-keyword]
      weight = 1.0

      [strategies.simple-keyword.options]
      max_result = 3
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:5: strategies.simple-keyword.options.max_result: unknown key"

  Scenario: A strategy option out of range stops with file, line, key and the value given
    Given the project config file:
      """
      [strategies.simple-keyword.options]
      max_results = 0
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:2: strategies.simple-keyword.options.max_results: Input should be greater than or equal to 1 (got 0)"

  Scenario: Every setting in the default config.toml is explained by a comment
    When I generate the default config.toml
    Then every setting in it has a comment just above it

  Scenario: The default config.toml is a valid project config
    Given the default config.toml is the project's config file
    When the configuration is loaded
    Then every value comes from config.toml or the defaults and equals the default
    And "budget.default" is 4000 from "config.toml"
