Feature: A strategy declares the weight it runs with unless config says otherwise
  A strategy's weight scales its share of the budget and its vote in fusion. A plugin
  author may declare `default_weight` on the strategy (a finite number >= 0); it is the
  weight the strategy runs with when `[strategies.NAME] weight` is unset, and config and
  a request's own weight override it in that order. Without a declaration the weight is 1.
  The built-in `relevance` declares 8: it pools keyword and vector hits, and the default
  mix must follow its ranking (see docs/evaluation.md for the measurements).

  Scenario: A declared default weight shares out the budget as a configured weight would
    Given a strategy "lexical" of quality 1.0 and default weight 3 that proposes nothing
    And a strategy "semantic" of quality 0.5 that proposes nothing
    When I ask for "how is the budget split?" within 1400 tokens
    Then the report of "lexical" shows 1200 tokens allocated
    And the report of "semantic" shows 200 tokens allocated

  Scenario: A weight in config overrides the declared default
    Given the setting "strategies.lexical.weight" is 0.5
    And a strategy "lexical" of quality 1.0 and default weight 3 that proposes nothing
    And a strategy "semantic" of quality 0.5 that proposes nothing
    When I ask for "how is the budget split?" within 1400 tokens
    Then the report of "lexical" shows 700 tokens allocated
    And the report of "semantic" shows 700 tokens allocated

  Scenario: A request's weight overrides both
    Given the setting "strategies.lexical.weight" is 0.5
    And a strategy "lexical" of quality 1.0 and default weight 3 that proposes nothing
    And a strategy "semantic" of quality 0.5 that proposes nothing
    When I ask for "how is the budget split?" within 1500 tokens naming "lexical" with weight 1 and "semantic" with none
    Then the report of "lexical" shows 1000 tokens allocated
    And the report of "semantic" shows 500 tokens allocated

  Scenario: A request that names a strategy without a weight leaves it its declared default
    Given a strategy "lexical" of quality 1.0 and default weight 3 that proposes nothing
    And a strategy "semantic" of quality 0.5 that proposes nothing
    When I ask for "how is the budget split?" within 1400 tokens naming "lexical" with none and "semantic" with none
    Then the report of "lexical" shows 1200 tokens allocated
    And the report of "semantic" shows 200 tokens allocated

  Scenario: The declared default weight is the strategy's vote in fusion
    Given a strategy "first" of quality 1.0 and default weight 4 that proposes:
      | fragment | path     | lines | text                                     |
      | beta     | beta.md  | 1-2   | Beta describes the split of the budget.  |
      | alpha    | alpha.md | 1-2   | Alpha explains how the budget is split.  |
    And a strategy "second" of quality 1.0 that proposes:
      | fragment | path     | lines | text                                     |
      | alpha    | alpha.md | 1-2   | Alpha explains how the budget is split.  |
      | beta     | beta.md  | 1-2   | Beta describes the split of the budget.  |
    When I ask for "how is the budget split?" within 1000 tokens
    Then the context holds the fragments "beta, alpha" in this order

  Scenario: Without the declaration both votes weigh the same, and ties go by id
    Given a strategy "first" of quality 1.0 that proposes:
      | fragment | path     | lines | text                                     |
      | beta     | beta.md  | 1-2   | Beta describes the split of the budget.  |
      | alpha    | alpha.md | 1-2   | Alpha explains how the budget is split.  |
    And a strategy "second" of quality 1.0 that proposes:
      | fragment | path     | lines | text                                     |
      | alpha    | alpha.md | 1-2   | Alpha explains how the budget is split.  |
      | beta     | beta.md  | 1-2   | Beta describes the split of the budget.  |
    When I ask for "how is the budget split?" within 1000 tokens
    Then the fused scores of "alpha" and "beta" are equal

  Scenario Outline: A default weight that is not a finite number >= 0 makes the plugin broken
    Given a strategy "handbook" that proposes:
      | fragment | path        | lines | text                                         |
      | intro    | handbook.md | 1-4   | The handbook explains how budgets are split. |
    And a plugin "wonky" whose strategy declares the default weight <value>
    When I ask for "budgets" within 500 tokens
    Then the plugin "wonky" is broken with an error mentioning "default_weight must be a finite number >= 0, got <shown>"
    And the context holds the fragment "intro"

    Examples:
      | value    | shown    |
      | -1       | -1       |
      | nan      | nan      |
      | inf      | inf      |
      | "heavy"  | 'heavy'  |
      | true     | True     |

  Scenario: config init writes each installed strategy's default weight
    When I generate the default config.toml
    Then its table "strategies.relevance" sets weight to 8.0
    And its table "strategies.simple-keyword" sets weight to 1.0
    And its table "strategies.semantic-embedding" sets weight to 1.0

  Scenario: The built-in relevance strategy runs with weight 8 unless config says otherwise
    Given the sample documentation is indexed
    When I look at the strategies a default pipeline loads
    Then the strategy "relevance" runs with weight 8.0
    And the strategy "simple-keyword" runs with weight 1.0
