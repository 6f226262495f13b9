Feature: Sharing the token budget between strategies
  The BudgetAllocator shares the usable budget among the strategies that will run, in
  proportion to weight × quality × confidence, after giving each its floor and never above
  its cap. Whatever no strategy can take stays in the pool for the packer. A budget that
  cannot be honoured is refused with a clear error; a tiny budget gives an empty context
  that says why.

  Scenario: Shares follow weight × quality × confidence
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence |
      | lexical  | 1      | 0.5     | 1.0        |
      | semantic | 1      | 1.0     | 0.5        |
      | graph    | 2      | 1.0     | 1.0        |
    When 3000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 500    |
      | semantic | 500    |
      | graph    | 2000   |

  Scenario: A floor is given first, and the rest is shared
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | floor |
      | lexical  | 1      | 1.0     | 1.0        | 400   |
      | semantic | 1      | 1.0     | 1.0        | 0     |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 700    |
      | semantic | 300    |

  Scenario: Floors that together exceed the budget are scaled down
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | floor |
      | lexical  | 1      | 1.0     | 1.0        | 800   |
      | semantic | 1      | 1.0     | 1.0        | 800   |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 500    |
      | semantic | 500    |

  Scenario: A capped strategy stops at its cap and the others take the rest
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | cap  |
      | lexical  | 3      | 1.0     | 1.0        | 0.25 |
      | semantic | 1      | 1.0     | 1.0        | 1.0  |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 250    |
      | semantic | 750    |

  Scenario: A cap in tokens holds beside the cap fraction, whichever is lower
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | cap | cap tokens |
      | lexical  | 3      | 1.0     | 1.0        | 0.5 | 100        |
      | semantic | 1      | 1.0     | 1.0        | 0.5 | 800        |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 100    |
      | semantic | 500    |
    And 400 tokens stay in the pool

  Scenario: What no strategy can take stays in the pool
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | cap |
      | lexical  | 1      | 1.0     | 1.0        | 0.3 |
      | semantic | 1      | 1.0     | 1.0        | 0.3 |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 300    |
      | semantic | 300    |
    And 400 tokens stay in the pool

  Scenario: Whole tokens never add up to more than the budget
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence |
      | alpha    | 1      | 1.0     | 1.0        |
      | beta     | 1      | 1.0     | 1.0        |
      | gamma    | 1      | 1.0     | 1.0        |
    When 100 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | alpha    | 34     |
      | beta     | 33     |
      | gamma    | 33     |

  Scenario: One strategy alone gets the whole budget
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence |
      | lexical  | 0.2    | 0.3     | 0.1        |
    When 777 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 777    |

  Scenario: Weights share by their ratio however large or small they are
    # Any finite weight is a valid setting; their sum must not overflow to infinity.
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence |
      | lexical  | 1e308  | 1.0     | 1.0        |
      | semantic | 1e308  | 1.0     | 1.0        |
      | graph    | 1e-300 | 1.0     | 1.0        |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 500    |
      | semantic | 500    |
      | graph    | 0      |

  Scenario: A strategy with confidence 0 gets nothing
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence | floor |
      | lexical  | 1      | 1.0     | 1.0        | 0     |
      | semantic | 1      | 1.0     | 0.0        | 800   |
    When 1000 usable tokens are shared
    Then the shares are:
      | strategy | tokens |
      | lexical  | 1000   |
      | semantic | 0      |

  Scenario: A negative usable budget is refused
    Given strategies claiming the budget:
      | strategy | weight | quality | confidence |
      | lexical  | 1      | 1.0     | 1.0        |
    When -1 usable tokens are shared
    Then the allocator refuses with "usable budget must not be negative, got -1"

  Scenario: The allocator keeps its promises for any claims
    When the allocator shares random budgets among random claims 500 times
    Then no share ever exceeded its strategy's cap or went to a strategy with no priority
    And the shares never added up to more than the budget
    And the budget was used up whenever the caps allowed it

  Scenario Outline: A budget of <budget> tokens is refused with a clear error
    Given the sample documentation is indexed
    When I ask for "how is the budget split?" within <budget> tokens
    Then the assembly fails with BudgetError saying "budget must be a positive number of tokens, got <budget>"

    Examples:
      | budget |
      | 0      |
      | -100   |

  Scenario: A request object with a zero budget is refused too
    Given the sample documentation is indexed
    When I send a request for "how is the budget split?" with a budget of 0 tokens
    Then the assembly fails with BudgetError saying "budget must be a positive number of tokens, got 0"

  Scenario: In a real assembly the shares follow config weights and strategy quality
    Given the setting "strategies.lexical.weight" is 3
    And a strategy "lexical" of quality 1.0 that proposes nothing
    And a strategy "semantic" of quality 0.5 that proposes nothing
    When I ask for "how is the budget split?" within 1400 tokens
    Then the report of "lexical" shows 1200 tokens allocated
    And the report of "semantic" shows 200 tokens allocated
    And "lexical" was asked for candidates within 1200 tokens

  Scenario: The only strategy that runs gets the whole budget
    Given a strategy "lexical" that proposes:
      | fragment | path      | lines | text                           |
      | split    | budget.md | 1-3   | The budget is split by weight. |
    When I ask for "how is the budget split?" within 1000 tokens
    Then the report of "lexical" shows 1000 tokens allocated
    And the report of "simple-keyword" says skipped with a reason mentioning "nothing indexed yet"

  Scenario: A strategy with confidence 0 is skipped with a reason, the other takes everything
    Given a strategy "lexical" that proposes:
      | fragment | path      | lines | text                           |
      | split    | budget.md | 1-3   | The budget is split by weight. |
    And a strategy "semantic" with confidence 0 that proposes:
      | fragment | path      | lines | text                    |
      | vectors  | vector.md | 1-3   | Nearest neighbours win. |
    When I ask for "how is the budget split?" within 1000 tokens
    Then the report of "semantic" says skipped with a reason mentioning "can_handle returned 0"
    And the report of "semantic" shows 0 tokens allocated
    And the report of "lexical" shows 1000 tokens allocated
    And the context holds the fragment "split"
    And the context does not hold the fragment "vectors"

  Scenario: A budget smaller than any fragment gives an empty context that says why
    Given the sample documentation is indexed
    When I ask for "how is the token budget split between strategies?" within 3 tokens
    Then the context is empty
    And the dropped list explains that the budget was too small

  Scenario: A budget smaller than the only proposed fragment gives an empty context that says why
    Given the sample documentation is indexed
    And a strategy "lexical" that proposes:
      | fragment | path      | lines | text                                                       |
      | split    | budget.md | 1-3   | The budget is split by weight, quality and confidence.    |
    When I ask for "how is the budget split?" within 14 tokens using only the strategy "lexical"
    Then the context is empty
    And the dropped list explains that the budget was too small

  Scenario: A strategy that needs no index, with a fragment too big for the budget, and nothing indexed
    Given a strategy "lexical" that proposes:
      | fragment | path      | lines | text                                                       |
      | split    | budget.md | 1-3   | The budget is split by weight, quality and confidence.    |
    When I ask for "how is the budget split?" within 14 tokens
    Then the context is empty
    And the dropped list explains that the budget was too small
