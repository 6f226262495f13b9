Feature: Finding code from what a request points at, by the structure of the code
  The breadth-depth-navigator starts from the request's focus (node URIs, paths, `path:line`,
  dotted names or symbols), or from what the query names in code (traceback locations,
  paths, symbols, file names, then keyword hits weighed per file), walks the code graph
  breadth-first up to `max_hops` over typed edges with per-type weights, then depth-first
  while its budget lasts, and ranks what it reached by reach and personalised PageRank. The
  focus comes in full, near nodes as skeletons, far ones as listings; every reason names the
  path that reached the node.

  Background: a small shop: pricing is called by checkout, which a receipt printer calls
    Given a file "shop/models.py" containing:
      """
      class Order:
          def __init__(self, total: int) -> None:
              self.total = total
      """
    And a file "shop/pricing.py" containing:
      """
      from .models import Order


      def apply_discount(order: Order, percent: int) -> int:
          reduced = order.total * (100 - percent)
          return reduced // 100
      """
    And a file "shop/checkout.py" containing:
      """
      from . import pricing
      from .pricing import apply_discount


      def checkout(order) -> int:
          return apply_discount(order, 10)
      """
    And a file "shop/receipts.py" containing:
      """
      from .checkout import checkout


      def print_receipt(order) -> str:
          return f"paid {checkout(order)}"
      """
    And a file "tests/test_pricing.py" containing:
      """
      from shop.pricing import apply_discount


      def test_discount_of_a_discount_order():
          # discount discount discount: the discount of a discounted order
          assert apply_discount(Order(100), 10) == 90
      """
    And the project is indexed

  Scenario: The focus comes in full, its callers as skeletons, theirs as listings
    Given the packer weighs relevance only
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/pricing.py#apply_discount" at depth 9
    And the context holds "shop/checkout.py#checkout" at depth 4
    And the context holds "shop/receipts.py#print_receipt" at depth 0
    And the reason of "shop/checkout.py#checkout" is "calls → apply_discount, 1 hop from focus apply_discount"
    And the reason of "shop/receipts.py#print_receipt" mentions "calls → checkout, 2 hops from focus apply_discount"

  Scenario: A depth the packer values at 0 is not proposed: the navigator weighs depths as [packing] does
    # The navigator kept its own copy of the depth values: the listing of a node two hops
    # away came in although `[packing] depth_value_listing` said listings are worth nothing.
    Given the packer weighs relevance only
    And the packer values a listing at 0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/pricing.py#apply_discount" at depth 9
    And the context holds "shop/checkout.py#checkout" at depth 4
    And the navigator proposed "shop/checkout.py#checkout" but not "shop/receipts.py#print_receipt"

  Scenario Outline: A question about callers gets the callers in full, what it asks about as a skeleton
    # The function asked about came in full, 2,559 of the 3,000 tokens, and its callers
    # were left out: the walk weighed callers and callees alike.
    Given a file "shop/ledger.py" whose function "settle_ledger" adds up 120 lines of a ledger
    And a file "shop/refunds.py" containing:
      """
      from . import ledger


      def refund(order):
          return -ledger.settle_ledger(order.lines)
      """
    And a file "shop/reports.py" containing:
      """
      from shop.ledger import settle_ledger


      def monthly_report(months):
          return {month: settle_ledger(lines) for month, lines in months.items()}
      """
    And the project is indexed
    When I ask for "<question>" within 3000 tokens using only the navigator
    Then the context holds "shop/refunds.py#refund, shop/reports.py#monthly_report", each at depth 9
    And the context holds "shop/ledger.py#settle_ledger" at depth 4
    And the reason of "shop/refunds.py#refund" is "calls → settle_ledger, 1 hop from callers asked of settle_ledger"
    When I ask for "<question>" within 3000 tokens
    Then the context holds "shop/refunds.py#refund"
    And the context holds "shop/reports.py#monthly_report"
    And the text of "shop/ledger.py#settle_ledger" takes at most a 4th of the 3000 tokens

    Examples:
      | question                          |
      | who calls settle_ledger?          |
      | Where is `settle_ledger` used?    |
      | callers of settle_ledger()        |

  Scenario Outline: The walk goes no further than max_hops
    Given the navigator option "max_hops" is <hops>
    And the navigator option "depth_first_hops" is 0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context <holds> "shop/receipts.py#print_receipt"
    And the context holds "shop/checkout.py#checkout"

    Examples:
      | hops | holds            |
      | 1    | does not hold    |
      | 2    | holds            |

  Scenario: Depth first past max_hops while the budget lasts
    Given the navigator option "max_hops" is 1
    And the navigator option "depth_first_hops" is 1
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/receipts.py#print_receipt"

  Scenario: Reach halves with every hop, and an edge walked against its direction weighs 0.8 of it
    # Without PageRank a node's score is its reach over the best reach: checkout calls the
    # focus (1.0 x 0.8 x 0.5), print_receipt calls checkout (0.4 x 0.8 x 0.5).
    Given the navigator option "pagerank_weight" is 0.0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the reason of "shop/checkout.py#checkout" mentions "score 0.400"
    And the reason of "shop/receipts.py#print_receipt" mentions "score 0.160"

  Scenario: At most max_neighbours edges are followed from a node, the heaviest first
    Given the navigator option "max_neighbours" is 1
    And the navigator option "depth_first_hops" is 0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/checkout.py#checkout"
    And the context does not hold "shop/pricing.py"

  Scenario: Nodes of equal score are proposed in the order of their URIs
    # start calls 24 functions, each one hop away with the same score. A small budget
    # asks for 20 nodes at least: the focus and the first 19 functions by URI.
    Given a file "core.py" whose function "start" calls 24 functions f00, f01 and on
    And the project is indexed
    When I ask for "what does this do?" within 100 tokens focused on "start" using only the navigator
    Then the navigator proposed "core.py#f18" but not "core.py#f19"

  Scenario: Depth first stops once the nodes reached hold twice the allocation
    # A step past max_hops reaches print_receipt; then the nodes reached hold enough for a
    # budget of 60 tokens, and the walk goes no further (Order.__init__ would be next).
    Given the navigator option "max_hops" is 1
    And the navigator option "depth_first_hops" is 3
    When I ask for "what does this do?" within 60 tokens focused on "apply_discount" using only the navigator
    Then the navigator proposed "shop/receipts.py#print_receipt" but not "shop/models.py#Order.__init__"

  Scenario: In a code question, a test that the query's words point at weighs less as a starting point
    # test_pricing.py holds the query's words more often than pricing.py; as a seed of a
    # code question it weighs non_source_factor (0.2) as much, and pricing.py ranks first.
    Given the packer weighs relevance only
    When I ask for "discount of a discounted order" as a code question within 2000 tokens using only the navigator
    Then "shop/pricing.py" comes before "tests/test_pricing.py" in the navigator's list

  Scenario: An edge type weighed 0 is not walked; the others still are
    Given the packer weighs relevance only
    And the navigator option "calls_weight" is 0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context does not hold "shop/checkout.py#checkout"
    And the context holds "shop/pricing.py" at depth 4
    And the reason of "shop/pricing.py" is "contains → apply_discount, 1 hop from focus apply_discount"

  Scenario Outline: Heavier edges rank first
    Given the packer weighs relevance only
    And the navigator option "calls_weight" is <calls>
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then "<first>" comes before "<second>" in the navigator's list

    Examples:
      | calls | first                    | second                   |
      | 1.0   | shop/checkout.py#checkout | shop/pricing.py          |
      | 0.1   | shop/pricing.py          | shop/checkout.py#checkout |

  Scenario: A focus the graph does not know is named in the report, never raised
    When I ask for "what does this do?" within 2000 tokens focused on "NoSuchThing, apply_discount, Nowhere" using only the navigator
    Then the report of "breadth-depth-navigator" says ok with a reason mentioning "unknown focus: NoSuchThing, Nowhere"
    And the context holds "shop/pricing.py#apply_discount" at depth 9

  Scenario: A focus that names nothing at all is still reported
    When I ask for "what does this do?" within 2000 tokens focused on "NoSuchThing" using only the navigator
    Then the report of "breadth-depth-navigator" says ok with a reason mentioning "unknown focus: NoSuchThing"

  Scenario: A focus at path:line starts from the definition holding that line
    When I ask for "what does this do?" within 2000 tokens focused on "shop/pricing.py:6" using only the navigator
    Then the context holds "shop/pricing.py#apply_discount" at depth 9
    And the reason of "shop/pricing.py#apply_discount" is "focus shop/pricing.py:6"

  Scenario: A traceback in the query is the focus
    When I ask using only the navigator within 2000 tokens for:
      """
      Checkout crashes:
      Traceback (most recent call last):
        File "/home/me/venv/lib/python3.11/site-packages/shop/pricing.py", line 6, in apply_discount
          return reduced // 100
      ZeroDivisionError
      """
    Then the first fragment of the context is "shop/pricing.py#apply_discount" at depth 9
    And the reason of "shop/pricing.py#apply_discount" mentions "/home/me/venv/lib/python3.11/site-packages/shop/pricing.py:6"

  Scenario: A symbol named in the query is the focus
    When I ask for "Round the result of `apply_discount` up" within 2000 tokens using only the navigator
    Then the first fragment of the context is "shop/pricing.py#apply_discount" at depth 9
    And the reason of "shop/pricing.py#apply_discount" mentions "named in the query: apply_discount"

  Scenario: A file named in the query without its ending is a starting point
    When I ask for "the receipts come out twice" as a code question within 2000 tokens using only the navigator
    Then the reason of "shop/receipts.py" mentions "file named in the query: receipts"

  Scenario: Plain prose does not call for the navigator; code in the query does
    When I ask for "what is the weather like today" within 2000 tokens
    Then the report of "breadth-depth-navigator" says skipped with a reason mentioning "can_handle returned 0"
    When I ask for "why does apply_discount round down" within 2000 tokens
    Then the report of "breadth-depth-navigator" says ok

  Scenario: A walk out of time proposes what it found so far, and says so
    Given the navigator option "time_limit_ms" is 0
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/pricing.py#apply_discount" at depth 9
    And the context does not hold "shop/checkout.py#checkout"
    And the reason of "shop/pricing.py#apply_discount" mentions "walk stopped at its time limit"

  Scenario: Edges that take long to be ready do not eat the walk's time
    # In a one-shot `contextpipe query` on a large repository the graph resolves its edges
    # on first use, taking about a second: the walk's limit counts from when they are ready.
    # The edges take longer than the walk's limit, which is ten times what this walk takes
    # on a busy machine (the first walk of a process: up to 0.2 s).
    Given the navigator option "time_limit_ms" is 2000
    And the navigator option "total_limit_ms" is 30000
    And the graph's edges take 2.5 seconds to be ready
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the context holds "shop/pricing.py#apply_discount" at depth 9
    And the context holds "shop/checkout.py#checkout"
    And no reason from "breadth-depth-navigator" mentions "walk stopped at its time limit"

  Scenario: Edges not ready within the total limit leave the focus alone, in time
    # On a loaded machine the edges may take longer than the strategy's deadline: rather
    # than run into it and propose nothing at all, the navigator proposes its focus. The
    # edges here are never ready, and the total limit is a tenth of the deadline.
    Given the navigator option "total_limit_ms" is 300
    And the setting "strategies.breadth-depth-navigator.deadline_ms" is 3000
    And the graph's edges are not ready before the scenario ends
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the report of "breadth-depth-navigator" says ok
    And the context holds "shop/pricing.py#apply_discount" at depth 9
    And the context does not hold "shop/checkout.py#checkout"
    And the reason of "shop/pricing.py#apply_discount" mentions "the graph's edges were not ready after"

  Scenario: Edges that fail to load are reported in the navigator's report, not as a stray traceback
    # The edges are read on a thread of their own (rule 7): its failure is not printed as a
    # stray traceback on a service's stderr; the walk meets it and the report says it.
    Given the graph's edges fail to load with "damaged (edges cut short)"
    When I ask for "what does this do?" within 2000 tokens focused on "apply_discount" using only the navigator
    Then the report of "breadth-depth-navigator" says error with a reason mentioning "damaged (edges cut short)"
    And no thread ended with an error

  Scenario: A graph slow to load its names does not make the navigator decline a code question
    # In a new process the graph's first lookup loads every node's name: half a second at
    # 100k nodes, as long as `can_handle` is given (a tenth of the request's deadline). The
    # names a request gives are looked up before the strategies are asked, so the same
    # question gets the same answer on a quick machine and on a slow one. The names take
    # longer than `can_handle` is given (600 ms), and a quarter of the half of the deadline
    # that the lookup is waited for.
    Given the graph's names take 0.7 seconds to be ready
    When I ask for "why does apply_discount round down?" within 2000 tokens with a deadline of 6000 ms
    Then the report of "breadth-depth-navigator" says ok
    And the context holds "shop/pricing.py#apply_discount"
    And a pipeline opened anew and warmed up gives the same context

  Scenario: Without a focus, the file that most keyword evidence points at is a starting point
    When I ask for "discount percent" as a code question within 2000 tokens using only the navigator
    Then the reason of "shop/pricing.py" mentions "keyword evidence in"

  Scenario: The same request gives the same list
    When I ask for "why does apply_discount round down" within 2000 tokens using only the navigator
    Then asking again gives a byte-identical context

  Scenario Outline: Personalised PageRank lifts the neighbour the walked graph leads back to most
    Given a file "core.py" containing:
      """
      def start():
          return a_lonely() + z_shared()


      def a_lonely():
          return 1


      def z_shared():
          return 2


      def helper_one():
          return z_shared()


      def helper_two():
          return z_shared()
      """
    And the project is indexed
    And the packer weighs relevance only
    And the navigator option "pagerank_weight" is <share>
    When I ask for "what does this do?" within 2000 tokens focused on "start" using only the navigator
    Then "<first>" comes before "<second>" in the navigator's list

    Examples: equal reach, one hop each; without PageRank the tie goes by URI
      | share | first            | second           |
      | 0.0   | core.py#a_lonely | core.py#z_shared |
      | 0.3   | core.py#z_shared | core.py#a_lonely |
