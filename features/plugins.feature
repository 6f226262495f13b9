Feature: Strategy plugins
  Strategies come from plugins: pluggy hook implementations, registered in code or found
  through the `contextpipe.strategies` entry points of installed packages. A plugin that
  cannot be imported, raises in its hook or returns the wrong thing is listed as broken
  with its error, and every other strategy keeps working. Config and the environment
  decide which plugins load.

  Scenario: A strategy registered in code contributes to the context
    Given a strategy "handbook" that proposes:
      | fragment | path        | lines | text                                        |
      | intro    | handbook.md | 1-4   | The handbook explains how budgets are split. |
    When I ask for "budgets" within 500 tokens
    Then the plugin "handbook-plugin" is ok and provides "handbook"
    And the context holds the fragment "intro"
    And the fragment "intro" was proposed by "handbook" of plugin "handbook-plugin"

  Scenario Outline: A plugin that <misbehaves> is broken, and the others keep working
    Given a strategy "handbook" that proposes:
      | fragment | path        | lines | text                                        |
      | intro    | handbook.md | 1-4   | The handbook explains how budgets are split. |
    And a plugin "wonky" that <misbehaves>
    When I ask for "budgets" within 500 tokens
    Then the plugin "wonky" is broken with an error mentioning "<error>"
    And the plugin "handbook-plugin" is ok and provides "handbook"
    And the context holds the fragment "intro"

    Examples:
      | misbehaves                                  | error                                                   |
      | raises RuntimeError "catalogue offline"     | contextpipe_strategies raised RuntimeError: catalogue offline |
      | returns the string "handbook"               | returned 'handbook', not a list of strategies           |
      | returns the number 42                       | returned 42, not a list of strategies                   |
      | returns a strategy without a retrieve method | has no retrieve() method                               |
      | returns a strategy without a name           | name must be                                            |
      | returns a strategy of quality 1.5           | quality must be within [0, 1]                           |
      | defines no hook at all                      | defines no contextpipe_strategies hook                  |
      | returns nothing                             | returned None, not a list of strategies                 |

  Scenario: Two plugins cannot register strategies of the same name
    Given a strategy "handbook" that proposes:
      | fragment | path        | lines | text                                        |
      | intro    | handbook.md | 1-4   | The handbook explains how budgets are split. |
    And another plugin "copycat" also provides a strategy called "handbook"
    When I ask for "budgets" within 500 tokens
    Then the plugin "copycat" is broken with an error mentioning "strategy 'handbook' is already registered by plugin 'handbook-plugin'"
    And the fragment "intro" was proposed by "handbook" of plugin "handbook-plugin"

  Scenario: An installed plugin package is discovered through its entry point and used
    Given the installed package "cp-demo-plugin" provides the strategy "demo" through its entry point
    And the sample documentation is indexed
    When I ask for "how is the budget split?" within 800 tokens
    Then the plugin "cp-demo-plugin" is ok and provides "demo"
    And the plugin "cp-demo-plugin" comes from distribution "cp-demo-plugin" version "0.1"
    And the context holds a fragment proposed by "demo" of plugin "cp-demo-plugin 0.1"
    And the context holds a fragment proposed by "simple-keyword" of plugin "contextpipe 0.1.0"

  Scenario: An installed plugin that fails to import is broken, and the built-in strategy still works
    Given the installed package "cp-needs-numpy-9" fails to import with ImportError "needs numpy>=9"
    And the sample documentation is indexed
    When I ask for "how is the budget split?" within 800 tokens
    Then the plugin "cp-needs-numpy-9" is broken with an error mentioning "import failed: ImportError: needs numpy>=9"
    And the report of "simple-keyword" says ok
    And the context holds a fragment proposed by "simple-keyword" of plugin "contextpipe 0.1.0"

  Scenario: A plugin that is slow to load is reported with its load time and a warning
    # Every command loads every plugin: a slow import or hook makes them all slow.
    Given the installed package "cp-slow-plugin" takes 0.7 seconds to import and 0.6 seconds in its hook to provide the strategy "sluggish"
    When the plugins are discovered while capturing the log
    Then the plugin "cp-slow-plugin" is ok and provides "sluggish"
    And the plugin "cp-slow-plugin" took at least 1300 ms to load
    And the log warns that the plugin "cp-slow-plugin" is slow, with its load time

  Scenario Outline: A plugin still loading after the bound is left out and reported, and the others work
    # Every command loads every plugin: a 10 s hook made every command 10 s slower. The
    # plugin takes ten times the bound here, so no busy machine can make it look in time.
    Given the setting "plugins.load_timeout_ms" is 200
    And the installed package "cp-stalled-plugin" takes <import_s> seconds to import and <hook_s> seconds in its hook to provide the strategy "stalled"
    And the sample documentation is indexed
    When I ask for "how is the budget split?" within 800 tokens
    Then the plugin "cp-stalled-plugin" is broken with an error mentioning "left out: still loading after 200 ms (its import and its hook); every command would wait for it"
    And no strategy called "stalled" is registered
    And the report of "simple-keyword" says ok
    And the context holds a fragment proposed by "simple-keyword" of plugin "contextpipe 0.1.0"

    Examples:
      | import_s | hook_s |
      | 2        | 0      |
      | 0        | 2      |

  Scenario: Plugins load all at once: their loads share one bound, not one each
    # They loaded one after another: two 10 s hooks made every command 10 s slower, one
    # after the other. Here the first waits for the second's import, which it can see only
    # when both load at once; the bound is a tenth of what the first would wait.
    Given the setting "plugins.load_timeout_ms" is 5000
    And the installed packages "cp-first-waits" and "cp-second-wakes", whose first one's import waits up to 50 seconds for the second one's import to start
    When the plugins are discovered while capturing the log
    Then the plugin "cp-first-waits" is ok and provides "first-waits"
    And the plugin "cp-second-wakes" is ok and provides "second-wakes"

  Scenario: On a busy machine no built-in plugin is reported as slow
    # Built-in plugins are contextpipe's own code: their load time is contextpipe's, and a
    # busy machine makes any import slow. The clock here runs 1.5 s ahead at every reading:
    # every plugin seems to take that long to load.
    Given the installed package "cp-demo-plugin" provides the strategy "demo" through its entry point
    And plugins' load times are read from a clock that runs 1.5 seconds ahead at every reading
    When the plugins are discovered while capturing the log
    Then the log warns that the plugin "cp-demo-plugin" is slow, with its load time
    And no built-in plugin is marked slow

  Scenario: A plugin denied in config.toml does not load
    Given the project config file:
      """
      [plugins]
      deny = ["simple-keyword"]
      """
    When the plugins are discovered
    Then the plugin "simple-keyword" is disabled
    And no strategy called "simple-keyword" is registered

  Scenario: With an allow list, only the plugins it names load
    Given the installed package "cp-demo-plugin" provides the strategy "demo" through its entry point
    And the project config file:
      """
      [plugins]
      allow = ["cp-demo-plugin"]
      """
    When the plugins are discovered
    Then the plugin "cp-demo-plugin" is ok and provides "demo"
    And the plugin "simple-keyword" is disabled

  Scenario: CONTEXTPIPE_DISABLE_PLUGINS switches plugins off
    Given the installed package "cp-demo-plugin" provides the strategy "demo" through its entry point
    And the environment variable CONTEXTPIPE_DISABLE_PLUGINS is "simple-keyword, cp-demo-plugin"
    When the plugins are discovered
    Then the plugin "simple-keyword" is disabled
    And the plugin "cp-demo-plugin" is disabled
    And no strategy called "demo" is registered

  Scenario: The registry honours the environment it is given, not the process's
    Given the environment variable CONTEXTPIPE_DISABLE_PLUGINS is "simple-keyword"
    When the strategy registry discovers plugins with the scenario's settings and environment
    Then the registry lists the plugin "simple-keyword" as disabled
    When the strategy registry discovers plugins with an empty environment
    Then the registry lists the plugin "simple-keyword" as ok

  Scenario: A store backend is a plugin too: an installed one is used when config names it
    Given the installed store plugin "mirror" provides the backend "mirror"
    And the setting "store.backend" is "mirror"
    And a file "docs/budget.md" containing:
      """
      # Budgets

      The budget is split between the strategies.
      """
    When I index the project
    And I ask for "budget split" within 400 tokens
    Then the context is not empty
    And the store is in the project folder ".mirror-store"

  Scenario: A store plugin that fails to import stops every command with one line naming it
    Given the installed store plugin "remote" fails to import with ImportError "needs psycopg"
    And the project config file:
      """
      [store]
      backend = "remote"
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:2: store.backend: store backend 'remote' is broken: import failed: ImportError: needs psycopg"

  Scenario: A store plugin must provide the backend its entry point is named after
    Given the installed store plugin "odd" provides the backend "other"
    And the project config file:
      """
      [store]
      backend = "odd"
      """
    When the pipeline is opened
    Then loading fails with the one-line error "config.toml:2: store.backend: plugin 'odd' provides other, not 'odd'"

  Scenario: A store backend that fails to open says so in one line, naming it
    Given the installed store plugin "remote" fails to open with ConnectionRefusedError "no server at db:5432"
    And the setting "store.backend" is "remote"
    Then opening the pipeline fails with StoreError saying "store backend 'remote' failed to open: ConnectionRefusedError: no server at db:5432"
