Feature: Every store backend keeps the same promises
  A store backend is a plugin (entry-point group `contextpipe.stores`) that `[store] backend`
  names: the embedded SQLite store and the in-memory reference store are bundled, a
  third party writes others. Ingest, strategies and the command line reach a store only
  through its protocols, so every backend has to keep the same promises.

  Those promises ship in the package as checks (`contextpipe.stores.check`): `contextpipe
  store check NAME` runs each against the installed backend NAME on a temporary project of
  its own, through the protocols only, prints each broken promise in one line, naming the
  backend, the promise and what the store did instead, and ends with how many passed and
  failed. A check of an optional capability (graph, timeline, sessions, vector search) that
  the store does not offer is skipped. The scenarios here run those checks against the
  bundled backends, and against broken ones that must fail them.

  Scenario Outline: A bundled backend keeps every promise
    When I run "contextpipe store check <backend>"
    Then every check of the store contract passed

    Examples:
      | backend  |
      | embedded |
      | memory   |

  Scenario: The configured backend is checked when none is named
    Given the project config file:
      """
      [store]
      backend = "memory"
      """
    When I run "contextpipe store check"
    Then every check of the store contract passed

  Scenario: An unknown backend is one line naming the installed ones
    When I run "contextpipe store check postgres"
    Then the command fails with one line on stderr naming "unknown store backend 'postgres'; installed: embedded, memory"

  Scenario: A backend that needs its own settings is checked with those of the command line
    Given the installed store plugin "keyed": the memory store, opening only with the option token = "s3cret", as a server would
    When I run "contextpipe store check keyed --option token=s3cret"
    Then every check of the store contract passed

  Scenario: A backend that needs its own settings is checked with the configured ones when it is the configured backend
    Given the installed store plugin "keyed": the memory store, opening only with the option token = "s3cret", as a server would
    And the project config file:
      """
      [store]
      backend = "keyed"

      [store.options]
      token = "s3cret"
      """
    When I run "contextpipe store check"
    Then every check of the store contract passed

  Scenario: Another backend's configured settings are not handed to the one checked
    Given the installed store plugin "keyed": the memory store, opening only with the option token = "s3cret", as a server would
    And the project config file:
      """
      [store]
      backend = "memory"

      [store.options]
      token = "s3cret"
      """
    When I run "contextpipe store check keyed"
    Then the check says "keyed" does not open, saying "store.options.token: Field required"

  Scenario: A wrong setting of the backend's is the one line it says
    Given the installed store plugin "keyed": the memory store, opening only with the option token = "s3cret", as a server would
    When I run "contextpipe store check keyed --option token=guess"
    Then the check says "keyed" does not open, saying "store.options.token: the server refuses it"

  Scenario: An option that is not KEY=VALUE is one line saying how to write it
    When I run "contextpipe store check memory --option token"
    Then the command fails with one line on stderr naming "--option 'token': give KEY=VALUE"

  Scenario: A backend that hands a session another session's memory fails the scope check
    Given the installed store plugin "leaky": the memory store, but trusting the session a strategy's filters name
    When I run "contextpipe store check leaky"
    Then the check "memory reaches only the requests its scope allows, whatever is asked" failed, saying "variants asked for session s-a for session 's-b', user 'u-1' saw ['a1', 'a10'"
    And only that check failed

  Scenario: A backend that loses a committed file when its session fails later fails the write check
    Given the installed store plugin "forgetful": the memory store, but committing only when a write session ends
    When I run "contextpipe store check forgetful"
    Then the check "a failed write session keeps what it committed and nothing after" failed, saying "files() gives"
    And only that check failed

  Scenario: A backend that offers only the required capabilities passes, the optional checks skipped
    Given the installed store plugin "bare": the memory store, but offering only fragment lookup and text search
    When I run "contextpipe store check bare"
    Then every check of the store contract passed but those of the capabilities not offered, skipped

  Scenario: The strategies that need a capability the store lacks are skipped, saying which
    Given the installed store plugin "bare": the memory store, but offering only fragment lookup and text search
    And a file "app/util.py" containing:
      """
      def slug(text: str) -> str:
          return text.lower().replace(" ", "-")
      """
    When the project is indexed into the "bare" store and asked for "who calls slug?" as session "s-1"
    Then the strategies' reports say:
      | strategy                | status  | reason                                          |
      | breadth-depth-navigator | skipped | needs backend graph, which the store lacks      |
      | recency                 | skipped | needs backend timeline, which the store lacks   |
      | tiered                  | skipped | needs backend sessions, which the store lacks   |
      | simple-keyword          | ok      |                                                 |
    And the context holds "app/util.py#slug"

  Scenario: A mistake in the backend's own settings names the file, line and key
    Given the installed store plugin "keyed": the memory store, opening only with the option token = "s3cret", as a server would
    And the project config file:
      """
      [store]
      backend = "keyed"

      [store.options]
      tokn = "s3cret"
      """
    When I run "contextpipe query hello"
    Then the command fails with one line on stderr naming "config.toml:4: store.options.token: Field required"
