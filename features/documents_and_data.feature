Feature: Documents, data files and files that cannot be read
  Markdown and reStructuredText are split by their headings into nested sections; other
  text into paragraphs of at most `ingest.max_chunk_lines` lines; JSON, YAML and TOML files
  are documents. A document and each of its sections have a fragment at depth 9 (the full
  text), 4 (headings with their first sentences) and 0 (a title line). Binary or undecodable
  files are skipped and counted, and so are files larger than `ingest.max_file_bytes`.

  Background:
    Given a file "docs/guide.md" containing:
      """
      # Shop guide

      The shop sells things. It has a cart.

      ## Orders

      Every order has a total. Totals are in cents.

      ### Labels

      Labels are short! They fit on a receipt.

      ## Payments

      Payments are not implemented yet.
      """
    And a file "docs/manual.rst" containing:
      """
      ======
      Manual
      ======

      The manual is short. It explains installation.

      Install
      -------

      Run pip install. Then index a folder.

      Options
      ~~~~~~~

      Use ``--hops`` to widen the view.

      Upgrade
      -------

      Upgrade with pip.
      """

  Scenario: Markdown is split into sections nested by heading level
    When I index the project
    Then the nodes of "docs/guide.md" are:
      | uri                                | kind     | lines | inside                             |
      | uko://doc/docs/guide.md            | document | 1-15  |                                    |
      | uko://doc/docs/guide.md#shop-guide | section  | 1-3   | uko://doc/docs/guide.md            |
      | uko://doc/docs/guide.md#orders     | section  | 5-7   | uko://doc/docs/guide.md#shop-guide |
      | uko://doc/docs/guide.md#labels     | section  | 9-11  | uko://doc/docs/guide.md#orders     |
      | uko://doc/docs/guide.md#payments   | section  | 13-15 | uko://doc/docs/guide.md#shop-guide |

  Scenario: A markdown document and its sections at each depth
    When I index the project
    Then the text of "uko://doc/docs/guide.md" at depth 4 is:
      """
      # Shop guide: The shop sells things.
      ## Orders: Every order has a total.
      ### Labels: Labels are short!
      ## Payments: Payments are not implemented yet.
      """
    And the text of "uko://doc/docs/guide.md" at depth 0 is:
      """
      document Shop guide (docs/guide.md:1-15)
      """
    And the text of "uko://doc/docs/guide.md#orders" at depth 9 is:
      """
      ## Orders

      Every order has a total. Totals are in cents.
      """
    And the text of "uko://doc/docs/guide.md#orders" at depth 4 is:
      """
      ## Orders
      Every order has a total.
      """
    And the text of "uko://doc/docs/guide.md#orders" at depth 0 is:
      """
      section Orders (docs/guide.md:5-7)
      """
    And every module, definition, document and section has fragments at depths 9, 4 and 0

  Scenario: reStructuredText is split into sections nested by title style
    When I index the project
    Then the nodes of "docs/manual.rst" are:
      | uri                               | kind     | lines | inside                            |
      | uko://doc/docs/manual.rst         | document | 1-20  |                                   |
      | uko://doc/docs/manual.rst#manual  | section  | 1-5   | uko://doc/docs/manual.rst         |
      | uko://doc/docs/manual.rst#install | section  | 7-10  | uko://doc/docs/manual.rst#manual  |
      | uko://doc/docs/manual.rst#options | section  | 12-15 | uko://doc/docs/manual.rst#install |
      | uko://doc/docs/manual.rst#upgrade | section  | 17-20 | uko://doc/docs/manual.rst#manual  |
    And the text of "uko://doc/docs/manual.rst" at depth 0 is:
      """
      document Manual (docs/manual.rst:1-20)
      """
    And the text of "uko://doc/docs/manual.rst#install" at depth 9 is:
      """
      Install
      -------

      Run pip install. Then index a folder.
      """

  Scenario: A reStructuredText document at depth 4 is its titles with their first sentences
    When I index the project
    Then the text of "uko://doc/docs/manual.rst" at depth 4 is:
      """
      - Manual: The manual is short.
      -- Install: Run pip install.
      --- Options: Use ``--hops`` to widen the view.
      -- Upgrade: Upgrade with pip.
      """
    And the text of "uko://doc/docs/manual.rst#install" at depth 4 is:
      """
      Install
      Run pip install.
      """

  Scenario: Other text is split into paragraphs of at most ingest.max_chunk_lines lines
    Given the setting "ingest.max_chunk_lines" is 5
    And a file "notes/meeting.txt" containing:
      """
      We agreed to ship on Friday. Everyone was there.

      Open points:
      - pricing
      - payments
      - labels
      - receipts
      - refunds
      - returns

      Next meeting in a week.
      """
    When I index the project
    Then the nodes of "notes/meeting.txt" are:
      | uri                                              | kind      | lines | inside                      |
      | uko://doc/notes/meeting.txt                      | document  | 1-11  |                             |
      | uko://doc/notes/meeting.txt#paragraph-1          | paragraph | 1-1   | uko://doc/notes/meeting.txt |
      | uko://doc/notes/meeting.txt#paragraph-2          | paragraph | 3-7   | uko://doc/notes/meeting.txt |
      | uko://doc/notes/meeting.txt#paragraph-2-part-2   | paragraph | 8-9   | uko://doc/notes/meeting.txt |
      | uko://doc/notes/meeting.txt#paragraph-3          | paragraph | 11-11 | uko://doc/notes/meeting.txt |
    And the text of "uko://doc/notes/meeting.txt#paragraph-2-part-2" at depth 9 is:
      """
      - refunds
      - returns
      """
    And the text of "uko://doc/notes/meeting.txt" at depth 0 is:
      """
      document notes/meeting.txt (notes/meeting.txt:1-11)
      """

  Scenario: JSON, YAML and TOML files are documents
    Given a file "config/settings.json" containing:
      """
      {
        "currency": "EUR",
        "vat": 20
      }
      """
    And a file "config/ci.yml" containing:
      """
      name: ci
      on: push
      """
    And a file "pyproject.toml" containing:
      """
      [project]
      name = "shop"
      """
    When I index the project
    Then the nodes of "config/settings.json" are:
      | uri                                   | kind     | lines | inside                         |
      | uko://doc/config/settings.json        | document | 1-4   |                                |
      | uko://doc/config/settings.json#part-1 | part     | 1-4   | uko://doc/config/settings.json |
    And the nodes of "config/ci.yml" are:
      | uri                            | kind     | lines | inside                  |
      | uko://doc/config/ci.yml        | document | 1-2   |                         |
      | uko://doc/config/ci.yml#part-1 | part     | 1-2   | uko://doc/config/ci.yml |
    And the nodes of "pyproject.toml" are:
      | uri                             | kind     | lines | inside                   |
      | uko://doc/pyproject.toml        | document | 1-2   |                          |
      | uko://doc/pyproject.toml#part-1 | part     | 1-2   | uko://doc/pyproject.toml |
    And the fragments record these languages:
      | uri                            | language |
      | uko://doc/config/settings.json | json     |
      | uko://doc/config/ci.yml        | yaml     |
      | uko://doc/pyproject.toml       | toml     |
    And the text of "uko://doc/config/settings.json" at depth 9 is:
      """
      {
        "currency": "EUR",
        "vat": 20
      }
      """

  Scenario: Binary and undecodable files are skipped and counted; empty and broken files are still indexed
    Given a binary file "assets/logo.png"
    And a binary file "build/shop.pyc"
    And a file "data/prices.csv" encoded in latin-1
    And a file "shop/__init__.py" containing:
      """
      """
    And a file "web/broken.js" containing:
      """
      export function total( {
        return 1;
      """
    When I index the project
    Then the index summary counts:
      | what                     | count |
      | files seen               | 7     |
      | files indexed            | 4     |
      | files with syntax errors | 1     |
      | files skipped            | 3     |
    And the index summary skipped:
      | reason              | files |
      | binary or not UTF-8 | 3     |
    And nothing from "assets/logo.png" is a node
    And nothing from "build/shop.pyc" is a node
    And nothing from "data/prices.csv" is a node
    And the nodes of "shop/__init__.py" are:
      | uri                          | kind   | lines | inside |
      | uko://code/shop/__init__.py  | module | 1-1   |        |

  Scenario: Files larger than ingest.max_file_bytes are skipped with the reason
    Given the setting "ingest.max_file_bytes" is 1000
    And a file "vendor/bundle.js" of 5000 bytes
    When I index the project
    Then the index summary skipped:
      | reason                 | files |
      | larger than 1000 bytes | 1     |
    And nothing from "vendor/bundle.js" is a node
    And no edge of the graph touches "vendor/bundle.js"

  Scenario: A file skipped as too large is indexed once the limit is raised
    Given the setting "ingest.max_file_bytes" is 1000
    And a file "vendor/bundle.js" of 5000 bytes
    And the project is indexed
    When the pipeline is reopened with the setting "ingest.max_file_bytes" at 10000
    And I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 1     |
    And the nodes of "vendor/bundle.js" are:
      | uri                                | kind   | lines | inside                      |
      | uko://code/vendor/bundle.js        | module | 1-1   |                             |
      | uko://code/vendor/bundle.js#module | block  | 1-1   | uko://code/vendor/bundle.js |
