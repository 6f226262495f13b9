Feature: Code questions: long issue texts, paths and tracebacks, source before tests
  An issue report is long: a template, an interpreter banner, version numbers, then the
  problem. Its terms are analysed rather than cut at the first 32: boilerplate, banners,
  URLs and numbers are left out, identifiers come first, then the other words, longest
  first. What the text names in code (paths, `path:line` locations, dotted names, symbols)
  is found for strategies to match against paths and the graph. A code question
  (`prefer_source`) ranks source files before tests, docs, changelogs and CI files.

  Scenario: The problem at the end of a long issue text is searched, the template is not
    Given a file "src/tool/render.py" containing:
      """
      def render_table(rows):
          '''Lay the rows out as a fixed-width table.'''
          widths = [max(len(cell) for cell in column) for column in zip(*rows)]
          return widths
      """
    And a file "src/tool/ask.py" containing:
      """
      def ask_before_reproduce(prompt):
          '''Describe the expected behaviour and the steps before asking.'''
          return input(prompt)
      """
    And the project is indexed
    When I ask for this within 2000 tokens using only the strategy "simple-keyword":
      """
      <!-- Thank you for reporting a bug. Please fill in every section of this template. -->
      ### Describe the bug
      A clear and concise description of what the bug is.
      ### To Reproduce
      Steps to reproduce the behavior, with the expected and actual results described here.
      ### Expected behavior
      A clear and concise description of what you expected to happen instead of this.
      ### Environment
      - OS version: Ubuntu 22.04.3
      - Python version: 3.11.4
      Python 3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0] on linux
      Type "help", "copyright", "credits" or "license" for more information.
      >>>
      The widths of columns come out wrong when a row of the table is empty: render_table
      """
    Then the first fragment of the context is "src/tool/render.py#render_table" at depth 9

  Scenario Outline: The terms of a long text leave out what says nothing about the problem
    Then the search terms of a long issue text <have> "<term>"

    Examples:
      | have          | term              |
      | include       | render_table      |
      | include       | widths            |
      | do not include | 3                |
      | do not include | 2023             |
      | do not include | copyright        |
      | do not include | https            |
      | do not include | describe         |

  Scenario Outline: A name in either spelling finds the code using it in either spelling, before prose
    Given a file "src/shop/make.py" containing:
      """
      def new_cart(customer):
          '''Start an empty basket for a customer.'''
          return ShoppingCart(customer)
      """
    And a file "src/shop/checkout.py" containing:
      """
      def checkout(shopping_cart):
          '''Charge the customer.'''
          return shopping_cart.total()
      """
    And a file "docs/shopping.md" containing:
      """
      # Shopping cart

      The shopping cart page lists what the customer picked. Every shopping cart has a total,
      and the total of a shopping cart is shown at the top of the shopping cart page.
      """
    And a file "src/shop/misc.py" containing:
      """
      def parse_date(text):
          '''Read a date written as year-month-day.'''
          return text.split("-")


      def send_mail(address, body):
          '''Post a message to an address.'''
          return address, body


      def load_stock(path):
          '''Read the stock levels from a file.'''
          return open(path).read()


      def ship_parcel(parcel):
          '''Hand a parcel to the carrier.'''
          return parcel
      """
    And the project is indexed
    When I ask for "<question>" within 2000 tokens using only the strategy "simple-keyword"
    Then the best fragments of the context, in any order, are "src/shop/make.py#new_cart, src/shop/checkout.py#checkout" at depth 9

    Examples:
      | question                            |
      | where does shopping_cart come from? |
      | who pays for a ShoppingCart?        |

  Scenario: A short query keeps its terms as it always did
    Then the search terms of "How is the \"budget split\"? BudgetAllocator.allocate 42" are "budget split, budgetallocator, budget, allocator, allocate, 42"

  Scenario: Paths, path:line locations, dotted names and symbols named in a text
    Then the code mentions of this text are:
      """
      Calling `click.echo` raises in _winconsole._WindowsConsoleWriter.write, see src/click/utils.py:120
      Traceback (most recent call last):
        File "/usr/lib/python3/site-packages/click/_winconsole.py", line 123, in write
      (e.g. on Windows) https://example.com/a/b.py
      """
    And they are:
      | kind     | value                                                          |
      | path     | src/click/utils.py                                             |
      | path     | /usr/lib/python3/site-packages/click/_winconsole.py            |
      | location | /usr/lib/python3/site-packages/click/_winconsole.py:123 in write |
      | location | src/click/utils.py:120                                         |
      | dotted   | click.echo                                                     |
      | dotted   | _winconsole._WindowsConsoleWriter.write                        |
      | symbol   | click                                                          |
      | symbol   | echo                                                           |
      | symbol   | _winconsole                                                    |
      | symbol   | _WindowsConsoleWriter                                          |
      | symbol   | write                                                          |

  Scenario Outline: A question about callers names what it asks the callers of
    Then the code mentions of this text are:
      """
      <question>
      """
    And they are:
      | kind       | value    |
      | <kind>     | <name>   |
      | callers of | <name>   |

    Examples:
      | question                                | kind   | name          |
      | Who calls settle_ledger?                | symbol | settle_ledger |
      | who calls allocate?                     | symbol | allocate      |
      | which functions use the tokenizer       | symbol | tokenizer     |
      | callers of `check_budget()`             | symbol | check_budget  |
      | Where is the `packer` used?             | symbol | packer        |

  Scenario: A question that names no callee asks no callers
    Then the code mentions of this text are:
      """
      who calls it? what does allocate do, and what is the budget used for?
      """
    And they are:
      | kind | value |

  Scenario Outline: What a path is for
    Then the path "<path>" is <role>

    Examples:
      | path                               | role      |
      | src/click/core.py                  | source    |
      | tests/test_core.py                 | test      |
      | src/pkg/conftest.py                | test      |
      | lib/thing_test.go                  | test      |
      | docs/api.rst                       | docs      |
      | README.md                          | docs      |
      | CHANGES.rst                        | changelog |
      | .github/ISSUE_TEMPLATE/bug.md      | ci        |
      | pyproject.toml                     | config    |
      | uv.lock                            | config    |
      | .pre-commit-config.yaml            | config    |
      | setup.py                           | config    |
      | examples/repo/repo.py              | example   |
      | LICENSE                            | docs      |

  Scenario: A code question ranks source before tests, docs and changelogs
    Given a file "src/shop/rates.py" containing:
      """
      def apply_rate(total, rate):
          '''Take a percent off the total.'''
          return total * (100 - rate) // 100
      """
    And a file "tests/test_rates.py" containing:
      """
      def test_percent_rounding():
          # percent rounding: the percent of a percent, rounding down
          assert apply_rate(100, 10) == 90
      """
    And a file "CHANGES.md" containing:
      """
      # Changes

      Percent rounding is now exact: percent rounding of a percent rounds down.
      """
    And the project is indexed
    When I ask for "percent rounding" within 2000 tokens using only the strategy "simple-keyword"
    Then the first fragment of the context is not from "src/shop/rates.py"
    When I ask for "percent rounding" as a code question within 2000 tokens using only the strategy "simple-keyword"
    Then the first fragment of the context is "src/shop/rates.py#apply_rate" at depth 9

  Scenario: The keyword option prefer_source makes every request a code question
    Given a file "src/shop/rates.py" containing:
      """
      def apply_rate(total, rate):
          '''Take a percent off the total.'''
          return total * (100 - rate) // 100
      """
    And a file "tests/test_rates.py" containing:
      """
      def test_percent_rounding():
          # percent rounding: the percent of a percent, rounding down
          assert apply_rate(100, 10) == 90
      """
    And the setting "strategies.simple-keyword.options.prefer_source" is true
    And the project is indexed
    When I ask for "percent rounding" within 2000 tokens using only the strategy "simple-keyword"
    Then the first fragment of the context is "src/shop/rates.py#apply_rate" at depth 9

  Scenario: A code question ranks every source item first, whichever strategies agree
    Given the sample documentation is indexed
    And a strategy "oblivious" that proposes:
      | fragment | path            | lines | text                          |
      | check    | tests/test_a.py | 1-3   | def test_a(): assert a() == 1 |
      | notes    | docs/a.md       | 1-2   | How a works.                  |
      | code     | src/a.py        | 1-2   | def a(): return 1             |
    And a strategy "agreeable" that proposes:
      | fragment | path            | lines | text                          |
      | check    | tests/test_a.py | 1-3   | def test_a(): assert a() == 1 |
      | build    | pyproject.toml  | 1-2   | [project]                     |
    When I ask for "a" as a code question within 500 tokens using only the strategies "oblivious, agreeable"
    Then the fragments of the context by fused score are "src/a.py#code, tests/test_a.py#check, pyproject.toml#build, docs/a.md#notes"
    When I ask for "a" within 500 tokens using only the strategies "oblivious, agreeable"
    Then the first fragment of the context is "tests/test_a.py#check" at depth 9
