Feature: Each indexed root keeps its own files; what is indexed is what was named
  `contextpipe index PATH` brings one root up to date: it adds and updates the files at or
  under PATH and removes only those that vanished from under it. Files indexed from other
  roots, inside the project folder or outside it, are left alone; `contextpipe forget PATH`
  removes a root's files when asked, and says how many. A PATH that is a file is that file
  alone. Another contextpipe store is never indexed, whatever its folder is called, and
  virtual environments and version-control folders are not walked unless `[ingest]` says
  so; the summary names every folder it did not walk.

  Background:
    Given a file "docs/guide.md" containing:
      """
      # Guide

      The budget guide.
      """
    And a file "src/app.py" containing:
      """
      def run():
          return 1
      """
    And a file "a/alpha.md" outside the project containing:
      """
      # Alpha

      The alpha notes about the budget.
      """
    And a file "b/beta.md" outside the project containing:
      """
      # Beta

      The beta notes about the budget.
      """

  Scenario: Indexing the project folder leaves files indexed from outside it alone
    Given "a" outside the project is indexed
    And "b" outside the project is indexed
    And the folder "docs" is indexed
    When I index the project
    Then the index run indexed 1 files, found 1 unchanged and removed 0
    And the store holds the files:
      | path              |
      | <outside>/a/alpha.md |
      | <outside>/b/beta.md  |
      | docs/guide.md     |
      | src/app.py        |

  Scenario: Indexing a root again removes only what vanished from under that root
    Given "a" outside the project is indexed
    And "b" outside the project is indexed
    And the project is indexed
    When I delete "a/alpha.md" outside the project
    And I delete "src/app.py"
    And I index "a" outside the project
    Then the index run indexed 0 files, found 0 unchanged and removed 1
    And the store holds the files:
      | path              |
      | <outside>/b/beta.md  |
      | docs/guide.md     |
      | src/app.py        |

  Scenario: Forgetting a root removes its files and says what it removed
    Given "a" outside the project is indexed
    And "b" outside the project is indexed
    And the project is indexed
    When I forget "a" outside the project
    Then it forgot 1 files and 6 fragments
    And the store holds the files:
      | path              |
      | <outside>/b/beta.md  |
      | docs/guide.md     |
      | src/app.py        |
    When I forget the folder "docs"
    Then it forgot 1 files and 6 fragments
    And searching for "guide" finds nothing

  Scenario: A folder that no longer exists can still be forgotten
    Given the project is indexed
    When I delete "docs/guide.md"
    And I delete the folder "docs"
    And I forget the folder "docs"
    Then it forgot 1 files and 6 fragments

  Scenario: Forgetting a path under which nothing is indexed says so
    Given the folder "docs" is indexed
    When I forget the folder "src"
    Then forgetting fails with ContextpipeError saying "src: nothing indexed at or under this path"
    And the store holds the files:
      | path          |
      | docs/guide.md |

  Scenario: Indexing one file indexes exactly that file
    Given a file "docs/other.md" containing:
      """
      # Other

      Another page.
      """
    When I index the file "docs/guide.md"
    Then the index summary counts:
      | what          | count |
      | files seen    | 1     |
      | files indexed | 1     |
    And the store holds the files:
      | path          |
      | docs/guide.md |
    When I index the file "docs/guide.md"
    Then the index run indexed 0 files, found 1 unchanged and removed 0

  Scenario: Indexing a folder after one of its files keeps that file's fragments as they are
    Given I index the file "docs/guide.md"
    When I index the folder "docs"
    Then the index run indexed 0 files, found 1 unchanged and removed 0

  Scenario: Another contextpipe store in the tree is not indexed, whatever its folder is called
    Given "src" is indexed into a store in the folder "vendor/old-index"
    And a file "vendor/old-index/notes.txt" containing:
      """
      Notes kept next to an index, about the budget.
      """
    When I index the project
    Then the index summary skipped nothing
    And the folders not walked are:
      | path             | reason           |
      | vendor/old-index | contextpipe store |
    And the store holds the files:
      | path          |
      | docs/guide.md |
      | src/app.py    |

  Scenario: A store named on the command line is not indexed either
    Given "src" is indexed into a store in the folder "vendor/old-index"
    When I index the folder "vendor/old-index"
    Then the index summary counts:
      | what       | count |
      | files seen | 0     |
    And the folders not walked are:
      | path             | reason           |
      | vendor/old-index | contextpipe store |

  Scenario: Virtual environments and version-control folders are not walked, and the summary says so
    Given a file "env/pyvenv.cfg" containing:
      """
      home = /usr/bin
      """
    And a file "env/lib/site.py" containing:
      """
      def site():
          return "budget"
      """
    And a file ".git/description" containing:
      """
      Unnamed repository; edit this file to name the budget repository.
      """
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files seen    | 2     |
      | files indexed | 2     |
    And the folders not walked are:
      | path | reason              |
      | .git | version control     |
      | env  | virtual environment |

  Scenario: Walking virtual environments and version-control folders can be switched on
    Given the setting "ingest.skip_virtualenvs" is false
    And the setting "ingest.skip_vcs" is false
    And a file "env/pyvenv.cfg" containing:
      """
      home = /usr/bin
      """
    And a file ".git/description" containing:
      """
      Unnamed repository; edit this file to name the budget repository.
      """
    When I index the project
    Then the index summary counts:
      | what          | count |
      | files seen    | 4     |
      | files indexed | 4     |
    And no folder was left unwalked

  Scenario: A store of the previous layout is upgraded in place, keeping every root and count
    Given "a" outside the project is indexed
    And the project is indexed
    And the store is turned back into layout 3, as the previous version wrote it
    When I ask for "budget" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 3, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the folder "docs"
    Then the index run indexed 0 files, found 1 unchanged and removed 0
    And the store holds the files:
      | path              |
      | <outside>/a/alpha.md |
      | docs/guide.md     |
      | src/app.py        |
    And every stored fragment's token count is its o200k_base count

  Scenario Outline: Naming something that is not a regular file or a folder is a one-line error, and nothing is read
    Given a FIFO "docs/pipe" that no process writes to
    When I run "contextpipe index <path>"
    Then the command fails with one line on stderr naming "<path>: not a regular file or a folder"
    And the project has no store

    Examples:
      | path      |
      | docs/pipe |
      | /dev/zero |
