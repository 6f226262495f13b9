Feature: The summary of an index run, and the graph's counts
  Every index run returns a summary: files seen, indexed, unchanged and removed, files
  skipped with their reasons, and the nodes, declared edges and fragments it wrote. Declared
  edges are what the files state (a call, an import, a mention): a node's place in its file
  is its parent, which the graph turns into a `contains` edge.
  `graph_stats` counts the loaded graph's nodes by kind and edges by type.

  Background:
    Given a file "calc/ops.py" containing:
      """
      def add(a, b):
          return a + b


      def double(a):
          return add(a, a)
      """
    And a file "README.md" containing:
      """
      # Calc

      Use `double` to double a number.
      """
    And a binary file "assets/logo.png"

  Scenario: The summary counts files, skipped reasons, nodes, edges and fragments
    When I index the project
    Then the index summary counts:
      | what              | count |
      | files seen        | 3     |
      | files indexed     | 2     |
      | files unchanged   | 0     |
      | files removed     | 0     |
      | nodes written     | 5     |
      | edges written     | 2     |
      | fragments written | 15    |
    And the index summary skipped:
      | reason              | files |
      | binary or not UTF-8 | 1     |
    And the index summary's nodes, edges and fragments are what the store holds

  Scenario: A store of an older layout is upgraded in place: skipped files stay skipped, every edge stays
    # Its Python file is parsed again (layout 12 read the names it uses without its imports).
    Given the setting "ingest.max_file_bytes" is 1000
    And a file "vendor/bundle.js" of 5000 bytes
    And the project is indexed
    And the store is turned back into layout 4, as the previous version wrote it
    When I ask for "double" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 4, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files seen      | 4     |
      | files indexed   | 1     |
      | files unchanged | 1     |
    And the index summary skipped:
      | reason                 | files |
      | binary or not UTF-8    | 1     |
      | larger than 1000 bytes | 1     |
    And the graph counts these edges by type:
      | type     | count |
      | calls    | 1     |
      | contains | 6     |
      | mentions | 1     |

  Scenario: The graph counts nodes by kind and edges by type
    When I index the project
    Then the graph counts these nodes by kind:
      | kind       | count |
      | directory  | 1     |
      | document   | 1     |
      | function   | 2     |
      | module     | 1     |
      | repository | 1     |
      | section    | 1     |
    And the graph counts these edges by type:
      | type     | count |
      | calls    | 1     |
      | contains | 6     |
      | mentions | 1     |

  Scenario: Re-indexing one changed file counts only what that file wrote
    Given the project is indexed
    When I change "calc/ops.py" to:
      """
      def add(a, b):
          return a + b
      """
    And I index the project
    Then the index summary counts:
      | what              | count |
      | files seen        | 3     |
      | files indexed     | 1     |
      | files unchanged   | 1     |
      | nodes written     | 2     |
      | edges written     | 0     |
      | fragments written | 6     |
    And the graph counts these edges by type:
      | type     | count |
      | contains | 5     |
    And the graph has none of these edges:
      | from                 | type     | to                             |
      | uko://doc/README.md#calc | mentions | uko://code/calc/ops.py#double |

  Scenario: The graph is counted again after every change, never from an older count
    Given the project is indexed
    And the graph counts these edges by type:
      | type     | count |
      | calls    | 1     |
      | contains | 6     |
      | mentions | 1     |
    When I change "calc/ops.py" to:
      """
      def add(a, b):
          return a + b
      """
    And I index the project
    Then the graph counts these edges by type:
      | type     | count |
      | contains | 5     |
    When I delete "calc/ops.py"
    And I index the project
    Then the graph counts these nodes by kind:
      | kind       | count |
      | document   | 1     |
      | repository | 1     |
      | section    | 1     |

  Scenario: The summary's nodes are the graph's, besides the repository and its folders
    When I index the project
    Then the index summary's nodes are the graph's indexed nodes
