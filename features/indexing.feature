Feature: Indexing a folder into the embedded store, and keyword search over it
  `contextpipe index PATH` reads text, markdown and source files into the embedded store
  (SQLite with an FTS5 index, in `.contextpipe/`): one fragment per heading section or
  top-level definition, each with its line span. Binary and ignored files are skipped.
  Re-indexing does only the work that changed, and an interrupted index leaves the
  previous one usable. The simple-keyword strategy searches it, and no user text is ever
  read as search syntax.

  Background:
    Given a file ".gitignore" containing:
      """
      drafts/
      *.secret.md
      """
    And a file "docs/guide.md" containing:
      """
      # Guide

      contextpipe assembles context within a token budget.

      ## Installation

      Install it with pip, then index a folder.

      ## Budgets

      The allocator splits the budget between strategies.
      """
    And a file "docs/allocator.py" containing:
      """
      import math

      LIMIT = 3


      def split_budget(budget):
          return math.floor(budget / LIMIT)


      class Allocator:
          def allocate(self, budget):
              return split_budget(budget)
      """
    And a file "docs/notes.txt" containing:
      """
      The first paragraph mentions zebras.

      The second paragraph mentions the budget.
      """
    And a binary file "docs/logo.png"
    And a file "docs/drafts/plan.md" containing:
      """
      # Plan

      An ignored draft about the budget.
      """
    And a file "docs/launch.secret.md" containing:
      """
      # Launch

      An ignored secret about the budget.
      """

  Scenario: Indexing reads text, markdown and code, and skips binary and ignored files
    When I index the folder "docs"
    Then the index run saw 4 files, indexed 3 and skipped 1 as "binary or not UTF-8"
    And the store holds these nodes:
      | uri                                   | kind     | lines |
      | uko://doc/docs/guide.md#guide         | section  | 1-3   |
      | uko://doc/docs/guide.md#installation  | section  | 5-7   |
      | uko://doc/docs/guide.md#budgets       | section  | 9-11  |
      | uko://code/docs/allocator.py#module   | block    | 1-3   |
      | uko://code/docs/allocator.py#split_budget | function | 6-7 |
      | uko://code/docs/allocator.py#Allocator | class   | 10-12 |
      | uko://doc/docs/notes.txt#paragraph-1  | paragraph | 1-1  |
      | uko://doc/docs/notes.txt#paragraph-2  | paragraph | 3-3  |
    And the full text of "uko://code/docs/allocator.py#split_budget" is lines 6-7 of "docs/allocator.py"
    And each node also has a one-line listing, like "function split_budget (docs/allocator.py:6-7)"
    And nothing from "docs/drafts/plan.md", "docs/launch.secret.md" or "docs/logo.png" is in the store

  Scenario: Indexing an unchanged folder again does no work
    Given the folder "docs" is indexed
    When I index the folder "docs"
    Then the index run indexed 0 files, found 3 unchanged and removed 0

  Scenario: Editing one file re-indexes only that file
    Given the folder "docs" is indexed
    When I change "docs/notes.txt" to:
      """
      The first paragraph now mentions giraffes.
      """
    And I index the folder "docs"
    Then the index run indexed 1 files, found 2 unchanged and removed 0
    And searching for "giraffes" finds "uko://doc/docs/notes.txt#paragraph-1"
    And searching for "zebras" finds nothing

  Scenario: Deleting a file removes its fragments
    Given the folder "docs" is indexed
    When I delete "docs/notes.txt"
    And I index the folder "docs"
    Then the index run indexed 0 files, found 2 unchanged and removed 1
    And the store has no fragment of "docs/notes.txt"
    And searching for "zebras" finds nothing

  Scenario: A search through the whole pipeline finds the indexed text
    Given the folder "docs" is indexed
    When I ask for "how do I install it with pip?" within 400 tokens
    Then the report of "simple-keyword" says ok
    And the first fragment is "uko://doc/docs/guide.md#installation" with lines 5-7

  Scenario Outline: Search syntax in a query is just text: <query>
    Given the folder "docs" is indexed
    When I ask for "<query>" within 400 tokens
    Then the report of "simple-keyword" is not an error
    And the context uses at most the budget

    Examples:
      | query                           |
      | "unbalanced quote about budget  |
      | budg*                           |
      | *                               |
      | NEAR(budget allocator, 2)       |
      | text:budget                     |
      | words:zebras OR 1=1             |
      | budget AND NOT zebras           |
      | (budget OR                      |
      | ^budget -zebras +pip            |
      | {budget allocator}              |
      | budget"; DROP TABLE fragments;-- |
      | 日本語 ünïcödé                  |

  Scenario: Operators and column names in a query are searched as words
    Given the folder "docs" is indexed
    When I ask for "text:zebras" within 400 tokens
    Then the first fragment is "uko://doc/docs/notes.txt#paragraph-1" with lines 1-1

  Scenario: An interrupted index keeps the files it committed; the next run does only the rest
    Given the setting "ingest.commit_seconds" is 0
    And the folder "docs" is indexed
    And the store holds 33 fragments
    When I change "docs/notes.txt" to:
      """
      The first paragraph now mentions giraffes.
      """
    And a file "docs/zz-last.md" is added
    And indexing "docs" is interrupted by an error when it reaches "docs/zz-last.md"
    Then the index run failed with "interrupted at docs/zz-last.md"
    And searching for "giraffes" finds "uko://doc/docs/notes.txt#paragraph-1"
    And searching for "zebras" finds nothing
    And the store has no fragment of "docs/zz-last.md"
    When I index the folder "docs"
    Then the index run indexed 1 files, found 3 unchanged and removed 0
    And searching for "last file" finds "uko://doc/docs/zz-last.md#last"

  Scenario: A file whose writing fails is left as it was, whole
    Given the setting "ingest.commit_seconds" is 0
    And the folder "docs" is indexed
    And the store holds 33 fragments
    When I change "docs/notes.txt" to:
      """
      The first paragraph now mentions giraffes.
      """
    And indexing "docs" fails while writing the full-text entries of "docs/notes.txt"
    Then the index run failed with "disk full while writing docs/notes.txt"
    And the store holds 33 fragments
    And searching for "zebras" finds "uko://doc/docs/notes.txt#paragraph-1"
    And searching for "giraffes" finds nothing
    When I index the folder "docs"
    Then the index run indexed 1 files, found 2 unchanged and removed 0

  Scenario: A tokenizer change counts every root again, even one indexed before the change
    Given a file "manual/usage.md" containing:
      """
      # Usage

      Install it with pip, then index a folder.
      """
    And the folder "docs" is indexed
    When the pipeline is reopened with the setting "tokenizer.name" at "cl100k_base"
    And I index the folder "manual"
    And I index the folder "docs"
    Then the index run indexed 3 files, found 0 unchanged and removed 0
    And every stored fragment's token count is its cl100k_base count

  Scenario: A tokenizer change that is interrupted is finished by the next run
    Given the setting "ingest.commit_seconds" is 0
    And the folder "docs" is indexed
    When the pipeline is reopened with the setting "tokenizer.name" at "cl100k_base"
    And indexing "docs" is interrupted by an error when it reaches "docs/notes.txt"
    And I index the folder "docs"
    Then the index run indexed 1 files, found 2 unchanged and removed 0
    And every stored fragment's token count is its cl100k_base count

  Scenario: Markdown sections: a preamble, code fences and repeated headings
    Given a file "manual/usage.md" containing:
      """
      Some words before any heading.

      # Usage

      ```bash
      # not a heading, a shell comment
      contextpipe index docs/
      ```

      ## Example

      First example.

      ## Example

      Second example.
      """
    When I index the folder "manual"
    Then the store holds these nodes:
      | uri                                  | kind    | lines |
      | uko://doc/manual/usage.md#preamble   | section | 1-1   |
      | uko://doc/manual/usage.md#usage      | section | 3-8   |
      | uko://doc/manual/usage.md#example    | section | 10-12 |
      | uko://doc/manual/usage.md#example-2  | section | 14-16 |

  Scenario: Long sections are split into parts of at most ingest.max_chunk_lines lines
    Given the setting "ingest.max_chunk_lines" is 5
    And a file "manual/long.txt" containing:
      """
      line 1
      line 2
      line 3
      line 4
      line 5
      line 6
      line 7
      """
    When I index the folder "manual"
    Then the store holds these nodes:
      | uri                                          | kind      | lines |
      | uko://doc/manual/long.txt#paragraph-1        | paragraph | 1-5   |
      | uko://doc/manual/long.txt#paragraph-1-part-2 | paragraph | 6-7   |

  Scenario: Python with a syntax error is still indexed, and the summary says so
    Given a file "manual/broken.py" containing:
      """
      def unfinished(:
          pass

      print("still text")
      """
    When I index the folder "manual"
    Then the index summary counts:
      | what                     | count |
      | files seen               | 1     |
      | files indexed            | 1     |
      | files with syntax errors | 1     |
      | files skipped            | 0     |
    And the index summary skipped nothing
    And searching for "still text" finds "uko://code/manual/broken.py#module"

  Scenario: Files that are too large, not UTF-8, or excluded in config are skipped
    Given the setting "ingest.max_file_bytes" is 200
    And the setting "ingest.exclude" is ["*.log"]
    And a file "manual/big.md" of 300 bytes
    And a file "manual/latin1.txt" encoded in latin-1
    And a file "manual/debug.log" containing:
      """
      budget debug output
      """
    When I index the folder "manual"
    Then the index run saw 2 files and skipped them as "larger than 200 bytes" and "binary or not UTF-8"

  Scenario Outline: A file that <change> between the walk and its reading is skipped, and the run completes
    When "docs" is indexed while "docs/notes.txt" <change> between the walk and its reading
    Then the index run skipped "docs/notes.txt" as "<reason>" and indexed 2 files
    And searching for "pip" finds "uko://doc/docs/guide.md#installation"
    And the store has no fragment of "docs/notes.txt"

    Examples:
      | change           | reason                  |
      | vanishes         | vanished during the run |
      | changes          | changed during the run  |
      | becomes a folder | not a regular file      |

  Scenario: A changed file that changes again during the run keeps what was indexed of it; the next run indexes it
    Given the folder "docs" is indexed
    When I change "docs/notes.txt" to:
      """
      The first paragraph now mentions giraffes.
      """
    And "docs" is indexed while "docs/notes.txt" changes between the walk and its reading
    Then the index run skipped "docs/notes.txt" as "changed during the run" and indexed 0 files
    And searching for "zebras" finds "uko://doc/docs/notes.txt#paragraph-1"
    When I index the folder "docs"
    Then the index run indexed 1 files, found 2 unchanged and removed 0
    And searching for "okapis" finds "uko://doc/docs/notes.txt#paragraph-1"

  Scenario Outline: Indexing from a Python script never runs the script again, <guard>
    Given a folder "big" of 48 markdown files, 4.5 MB in all: enough for worker processes
    And a script "index_big.py" that notes each run of its module code, then indexes "big", <guard>
    When I run the script
    Then it succeeded, its module code ran once, and worker processes parsed the files
    And the store holds the 48 files of "big"

    Examples:
      | guard                                       |
      | at module level, as the README does         |
      | under an `if __name__ == "__main__":` guard |

  Scenario Outline: Indexing ended by <signal> while worker processes parse leaves no process behind and says nothing
    Given a folder "big" of 48 markdown files, 4.5 MB in all: enough for worker processes
    And a script "index_big.py" that indexes "big" and sends itself <signal> when it writes the first parsed file
    When I run the script
    Then it was ended by <signal>, and once every process it started had ended, its stderr was empty

    Examples:
      | signal  |
      | SIGKILL |
      | SIGTERM |

  Scenario: Touching a file without changing it does not re-index it
    Given the folder "docs" is indexed
    When I touch "docs/guide.md"
    And I index the folder "docs"
    Then the index run indexed 0 files, found 3 unchanged and removed 0
    When I index the folder "docs"
    Then the index run indexed 0 files, found 3 unchanged and removed 0

  Scenario: A file that became binary is removed from the store
    Given the folder "docs" is indexed
    When "docs/notes.txt" becomes binary
    And I index the folder "docs"
    Then the store has no fragment of "docs/notes.txt"
    And searching for "zebras" finds nothing

  Scenario: Indexing a path that does not exist says so
    When I index the folder "nowhere"
    Then indexing fails with ContextpipeError saying "nowhere: no such file or directory"

  Scenario: A request's path and kind filters restrict what keyword search proposes
    Given the folder "docs" is indexed
    When I ask for "budget" within 1000 tokens, only from paths "docs/*.py" and kinds "function"
    Then every fragment in the context comes from "docs/allocator.py" and is a function
    And the context is not empty
