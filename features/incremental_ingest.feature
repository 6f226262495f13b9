Feature: Incremental indexing keeps the graph up to date by re-reading only what changed
  Re-indexing reads only the files that changed, and replaces their nodes, fragments and
  declared edges. Edges are resolved when the graph is loaded, so an edge from an unchanged
  file to a file added later resolves without reading the unchanged file again. A deleted
  file disappears from every table and from the full-text index. The summary of each run
  says what it did.

  Background:
    Given a file "app/main.py" containing:
      """
      from app import util


      def run() -> str:
          return util.slug("Hello World")
      """
    And a file "app/util.py" containing:
      '''
      """Make kebab-case slugs and titles."""


      def slug(text: str) -> str:
          return text.lower().replace(" ", "-")


      def title(text: str) -> str:
          return text.title()
      '''
    And a file "web/index.js" containing:
      """
      import { greet } from './greet.js';

      export function start() {
        return greet('world');
      }
      """
    And a file "docs/usage.md" containing:
      """
      # Usage

      Call `run` to get a slug. See [the notes](notes.md).
      """
    And the project is indexed

  Scenario: Indexing again without changes does no work and reads no file
    When I index the project again, watching what it reads
    Then the index summary counts:
      | what              | count |
      | files seen        | 4     |
      | files indexed     | 0     |
      | files unchanged   | 4     |
      | nodes written     | 0     |
      | edges written     | 0     |
      | fragments written | 0     |
    And it read no file and did not ask git

  Scenario: Removing an import from one file re-processes that file only, and its imports edge goes
    When I change "app/main.py" to:
      """
      def shout(text: str) -> str:
          return text.upper()


      def run() -> str:
          return shout("Hello World")
      """
    And I index the project again, watching what it reads
    Then the index summary counts:
      | what            | count |
      | files indexed   | 1     |
      | files unchanged | 3     |
    And it read only "app/main.py"
    And it asked git once
    And the graph has these edges:
      | from                        | type  | to                          |
      | uko://code/app/main.py#run  | calls | uko://code/app/main.py#shout |
    And the graph has none of these edges:
      | from                        | type    | to                         |
      | uko://code/app/main.py      | imports | uko://code/app/util.py     |
      | uko://code/app/main.py#run  | calls   | uko://code/app/util.py#slug |

  Scenario: Adding a call adds a calls edge
    Given the graph has none of these edges:
      | from                       | type  | to                           |
      | uko://code/app/main.py#run | calls | uko://code/app/util.py#title |
    When I change "app/main.py" to:
      """
      from app import util


      def run() -> str:
          return util.title(util.slug("Hello World"))
      """
    And I index the project
    Then the index summary counts:
      | what          | count |
      | files indexed | 1     |
      | nodes written | 3     |
    And the graph has these edges:
      | from                       | type    | to                           |
      | uko://code/app/main.py     | imports | uko://code/app/util.py       |
      | uko://code/app/main.py#run | calls   | uko://code/app/util.py#slug  |
      | uko://code/app/main.py#run | calls   | uko://code/app/util.py#title |

  Scenario: Edges to files added later resolve without re-reading the files that declare them
    Given the graph has none of these edges:
      | from                          | type     | to                         |
      | uko://code/web/index.js       | imports  | uko://code/web/greet.js    |
      | uko://doc/docs/usage.md#usage | links_to | uko://doc/docs/notes.md    |
    When I add a file "web/greet.js" containing:
      """
      export function greet(name) {
        return `Hello, ${name}!`;
      }
      """
    And I add a file "docs/notes.md" containing:
      """
      # Notes

      Slugs are lower case.
      """
    And I index the project again, watching what it reads
    Then the index summary counts:
      | what            | count |
      | files indexed   | 2     |
      | files unchanged | 4     |
    And it read only these files:
      | path          |
      | docs/notes.md |
      | web/greet.js  |
    And the graph has these edges:
      | from                          | type     | to                             |
      | uko://code/web/index.js       | imports  | uko://code/web/greet.js        |
      | uko://code/web/index.js#start | calls    | uko://code/web/greet.js#greet  |
      | uko://doc/docs/usage.md#usage | links_to | uko://doc/docs/notes.md        |

  Scenario: Deleting a file removes its nodes, fragments, edges and full-text entries
    Given the graph has these edges:
      | from                       | type    | to                          |
      | uko://code/app/main.py     | imports | uko://code/app/util.py      |
      | uko://code/app/main.py#run | calls   | uko://code/app/util.py#slug |
    When I delete "app/util.py"
    And I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 0     |
      | files unchanged | 3     |
      | files removed   | 1     |
    And nothing of "app/util.py" is left: no node, fragment, declared edge or search entry
    And the full-text index finds "kebab" nowhere
    And no edge of the graph touches "app/util.py"
    And the graph has these edges:
      | from                          | type     | to                         |
      | uko://code/app/main.py        | contains | uko://code/app/main.py#run |
      | uko://doc/docs/usage.md#usage | mentions | uko://code/app/main.py#run |

  Scenario: Editing a file replaces its full-text entries
    When I change "app/util.py" to:
      '''
      """Make snake_case slugs."""


      def slug(text: str) -> str:
          return text.lower().replace(" ", "_")
      '''
    And I index the project
    Then the full-text index finds "kebab" nowhere
    And searching for "snake_case slugs" finds "uko://code/app/util.py#module"
    And the definitions in "app/util.py" are:
      | uri                         | kind     | lines |
      | uko://code/app/util.py#slug | function | 4-5   |
