Feature: Running strategies under deadlines, each in isolation
  The StrategyExecutor runs every selected strategy concurrently, each under its own
  deadline and the request's. Whatever one strategy does (raise, hang, return the wrong
  thing, return more than its share) never fails the request: its report says what went
  wrong and the rest of the context is still assembled. Every run logs one event per
  strategy and one for the assembly.

  Background:
    # Deadlines ten times what a busy machine takes to run an instant strategy (a can_handle
    # that answers at once was seen to take 75 ms): a scenario about deadlines must not fail
    # because the machine is loaded.
    Given the setting "executor.strategy_deadline_ms" is 2000
    And the setting "strategies.laggard.deadline_ms" is 50
    And the setting "strategies.a-stuck.deadline_ms" is 600
    And the setting "strategies.slow-one.deadline_ms" is 10000
    And the setting "strategies.slow-two.deadline_ms" is 10000
    And the setting "strategies.slow-three.deadline_ms" is 10000
    And the setting "strategies.nightwalker.deadline_ms" is 60000
    And the setting "strategies.dawdler.deadline_ms" is 60000
    And the setting "strategies.dormant.enabled" is false
    And a strategy "steady" that proposes:
      | fragment | path      | lines | text                                             |
      | split    | budget.md | 1-4   | The allocator splits the budget by weight.       |
      | caps     | budget.md | 6-9   | Caps keep one strategy from taking every token. |

  Scenario: A strategy that raises is reported as an error, and the others still count
    Given a strategy "fragile" that raises ValueError "index corrupt"
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "fragile" says error with a reason mentioning "ValueError: index corrupt"
    And the report of "steady" says ok
    And the context holds the fragment "split"
    And the context holds the fragment "caps"

  Scenario: What a failing strategy was allotted goes to the others, asked again; a second answer that fails leaves the first
    Given a strategy "fragile" that raises ValueError "index corrupt"
    And a strategy "once" that raises RuntimeError "asked twice" when asked again, having proposed:
      | fragment | path      | lines | text                          |
      | tokens   | tokens.md | 1-2   | Tokens are counted exactly.   |
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "steady" says ok with a reason mentioning "asked again with"
    And the report of "once" says ok with a reason mentioning "which fragile returned: error, RuntimeError: asked twice; its first answer stands"
    And the context holds the fragment "tokens"
    And the context holds the fragment "split"

  Scenario Outline: A strategy that <misbehaves> in <method> is reported as an error, and the request goes on
    Given a strategy "rogue" that <misbehaves> in <method>
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "rogue" says error with a reason mentioning "<reason>"
    And the context holds the fragment "split"

    Examples:
      | misbehaves                                  | method     | reason                                                 |
      | calls sys.exit(3)                           | retrieve   | SystemExit: 3                                          |
      | calls sys.exit(3)                           | can_handle | can_handle raised SystemExit: 3                        |
      | raises an exception whose message is broken | retrieve   | UnreadableError (its message could not be read)             |
      | raises an exception whose message is broken | can_handle | can_handle raised UnreadableError (its message could not be read) |
      | raises KeyboardInterrupt                    | retrieve   | KeyboardInterrupt                                      |
      | raises KeyboardInterrupt                    | can_handle | can_handle raised KeyboardInterrupt                    |

  Scenario: An async strategy that raises KeyboardInterrupt is reported as an error, and the request goes on
    # A plugin's exceptions are its own: only the user's Ctrl-C stops a command.
    Given an async strategy "rogue" that raises KeyboardInterrupt in retrieve
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "rogue" says error with a reason mentioning "KeyboardInterrupt"
    And the context holds the fragment "split"

  Scenario Outline: A strategy that <fails> on every request leaves nothing for a full collection
    # A failure that ties the request into a reference cycle (its traceback holding the
    # frames that hold it) is freed only by a full collection: 40-50 ms that stop every
    # request in the process, past a 48 ms deadline (benchmarks/bench_service).
    Given <a strategy> "rogue" that <fails>
    When I ask for "how is the budget split?" within 500 tokens 5 times with the collector off
    Then the report of "rogue" says error
    And those requests left nothing in reference cycles

    Examples:
      | a strategy        | fails                                  |
      | a strategy        | raises RuntimeError "index on fire"    |
      | a strategy        | raises KeyboardInterrupt in can_handle |
      | an async strategy | raises KeyboardInterrupt in retrieve   |

  Scenario: A store read from threads that end leaves nothing for a full collection
    # A thread's store connection goes with the thread (a worker idle for a minute
    # leaves): dropped open, it and its statement cache are a reference cycle.
    Given the sample documentation is indexed
    When the store is searched for "budget" from 5 threads that then end, with the collector off
    Then each of those searches found something
    And those requests left nothing in reference cycles

  Scenario: A strategy that blocks past its deadline times out, and the request returns without it
    Given a strategy "stuck" that never returns from retrieve
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "stuck" says timeout with a reason mentioning "deadline of 2000 ms"
    And "stuck" was called 1 times, and none of its calls returned
    And the context holds the fragment "split"

  Scenario: A hung strategy holds up none of the plain strategies planned after it
    # Plain strategies of one request start on one worker, one after another; whatever
    # that worker has not started within 2 ms moves to workers of its own.
    Given a strategy "a-stuck" that hangs for 3 seconds
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "a-stuck" says timeout with a reason mentioning "deadline of 600 ms"
    And the report of "steady" says ok
    And the context holds the fragment "split"

  Scenario Outline: A strategy that <hangs> is quarantined after three hangs, and holds no more threads
    # A call given up on at its deadline cannot be killed: it holds its worker thread (an
    # async one, a task on its own loop, or its place in the loop's queue when the first
    # blocked the loop) until it returns. After three such calls the strategy is neither
    # asked nor run until one of them returns, so a hung plugin costs a long-running
    # process three threads, not one per request.
    Given a strategy "stuck" that <hangs>
    When I ask for "how is the budget split?" within 500 tokens 6 times with a deadline of 5000 ms
    Then the report of "stuck" says skipped with a reason mentioning "quarantined: 3 of its calls hung past their deadlines and have not returned"
    And "stuck" was called <called> times, and none of its calls returned
    And the report of "steady" says ok
    And the context holds the fragment "split"

    Examples:
      | hangs                                                  | called |
      | never returns from retrieve                            | 3      |
      | never returns from can_handle                          | 3      |
      | never returns from prepare                             | 3      |
      | never returns from an async retrieve, cancelled or not | 3      |
      | blocks its event loop for good                         | 1      |

  Scenario: A quarantined strategy runs again once one of its hung calls returns
    Given a strategy "stuck" that never returns from retrieve
    When I ask for "how is the budget split?" within 500 tokens 4 times with a deadline of 5000 ms
    Then the report of "stuck" says skipped with a reason mentioning "quarantined"
    When one of the calls of "stuck" returns
    And I ask for "how is the budget split?" within 500 tokens with a deadline of 5000 ms
    Then the report of "stuck" says timeout with a reason mentioning "deadline of 2000 ms"
    And "stuck" was called 4 times, and 1 of its calls returned

  Scenario: An async strategy that awaits past its deadline times out
    Given a strategy "dreamer" that never returns from an async retrieve unless cancelled
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "dreamer" says timeout with a reason mentioning "deadline of 2000 ms"
    And "dreamer" was called 1 times, and none of its calls returned
    And the context holds the fragment "caps"

  Scenario: An async strategy that ignores its cancellation is abandoned at its deadline
    Given a strategy "stubborn" that never returns from an async retrieve, cancelled or not
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "stubborn" says timeout with a reason mentioning "deadline of 2000 ms"
    And "stubborn" was called 1 times, and none of its calls returned
    And the context holds the fragment "caps"

  Scenario: An async strategy that blocks its event loop holds up only itself
    # time.sleep in async code breaks the contract, and is an easy mistake to make. Each
    # async strategy runs on an event loop of its own, so it blocks only that one.
    Given a strategy "sleepwalker" that blocks its event loop for good
    And an async strategy "courteous" that proposes:
      | fragment | path      | lines | text                                    |
      | polite   | polite.md | 1-2   | An async strategy that answers at once. |
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "sleepwalker" says timeout with a reason mentioning "blocked its event loop"
    And the report of "courteous" says ok
    And the report of "steady" says ok
    And "sleepwalker" was called 1 times, and none of its calls returned
    And the context holds the fragment "split"
    And the context holds the fragment "polite"

  Scenario: A blocked event loop does not hold the request past its own deadline
    Given a strategy "nightwalker" that blocks its event loop for good
    When I ask for "how is the budget split?" within 500 tokens with a deadline of 5000 ms
    Then the report of "nightwalker" says timeout with a reason mentioning "deadline of 5000 ms"
    And the report of "steady" says ok
    And "nightwalker" was called 1 times, and none of its calls returned

  Scenario: A strategy whose confidence check hangs counts as declining, and the request returns promptly
    # can_handle has a tenth of the request's deadline (at least 100 ms, at most half) to
    # answer.
    Given a strategy "ponderer" that never returns from can_handle
    When I ask for "how is the budget split?" within 500 tokens with a deadline of 5000 ms
    Then the report of "ponderer" says timeout with a reason mentioning "can_handle gave no answer within 500 ms"
    And the report of "ponderer" shows an elapsed time of at least 500 ms
    And the report of "steady" says ok
    And the context holds the fragment "split"
    And "ponderer" was called 1 times, and none of its calls returned

  Scenario: A strategy whose preparation hangs is still asked, after half the request's deadline
    # `prepare` (one-time work before `can_handle`) is given half the request's deadline;
    # what it left undone is the strategy's own business.
    Given a strategy "ponderer" that never returns from prepare
    When I ask for "how is the budget split?" within 500 tokens with a deadline of 5000 ms
    Then the report of "ponderer" says ok
    And the report of "steady" says ok
    And the context holds the fragment "split"
    And "ponderer" was called 1 times, and none of its calls returned

  Scenario: A strategy whose preparation raises is still asked, and the request goes on
    Given a strategy "brittle" whose prepare raises
    # Asked on the worker its preparation ran on, at once: not moved at half the deadline.
    When I ask for "how is the budget split?" within 500 tokens 2 times with a deadline of 5000 ms
    Then the report of "brittle" says ok
    And the report of "steady" says ok
    And the context holds the fragment "split"
    And "brittle" was prepared 2 times
    And "brittle" was asked each time on the worker it was prepared on

  Scenario: The request's own deadline is shorter than the strategy's
    Given a strategy "dawdler" that never returns from retrieve
    When I ask for "how is the budget split?" within 500 tokens with a deadline of 5000 ms
    Then the report of "dawdler" says timeout with a reason mentioning "deadline of 5000 ms"
    And "dawdler" was called 1 times, and none of its calls returned

  Scenario: A per-strategy deadline in config overrides the executor's default
    Given a strategy "laggard" that hangs for 3 seconds
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "laggard" says timeout with a reason mentioning "deadline of 50 ms"

  Scenario: Strategies run at the same time, not one after the other
    # Each proposes only once all three are running: one after the other, none would.
    Given a strategy "slow-one" that proposes only once 3 strategies run at once:
      | fragment | path   | lines | text                       |
      | one      | one.md | 1-2   | The first slow strategy.   |
    And a strategy "slow-two" that proposes only once 3 strategies run at once:
      | fragment | path   | lines | text                       |
      | two      | two.md | 1-2   | The second slow strategy.  |
    And a strategy "slow-three" that proposes only once 3 strategies run at once:
      | fragment | path     | lines | text                      |
      | three    | three.md | 1-2   | The third slow strategy.  |
    When I ask for "how is the budget split?" within 500 tokens
    Then the context holds the fragment "one"
    And the context holds the fragment "two"
    And the context holds the fragment "three"

  Scenario Outline: A strategy that returns <output> is reported as an error
    Given a strategy "sloppy" that returns <output>
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "sloppy" says error with a reason mentioning "<reason>"
    And the context holds the fragment "split"

    Examples:
      | output                                      | reason                                                                                                       |
      | a list of strings                           | malformed candidate #1: candidate: Input should be a valid dictionary or instance of Candidate (got 'budget.md') |
      | a list of dictionaries missing the fragment | malformed candidate #1: fragment: Field required                                                             |
      | a dictionary                                | returned dict, expected a list of Candidate                                                                  |
      | a string                                    | returned str, expected a list of Candidate                                                                   |
      | None                                        | returned NoneType, expected a list of Candidate                                                              |

  Scenario: A strategy tells the user something in its report with a note
    Given a strategy "noted" that proposes, with the note "unknown focus: NoSuchThing" for its report:
      | fragment | path       | lines | text                              |
      | tokens   | tokens.md  | 1-2   | Tokens are counted exactly.       |
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "noted" says ok with a reason mentioning "unknown focus: NoSuchThing"
    And the context holds the fragment "tokens"
    And the report of "steady" says ok

  Scenario: A long note is cut to one short line, so that no plugin floods the report
    Given a strategy "chatty" that returns no candidates and a note of 5000 characters
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "chatty" says ok with a reason of 200 characters ending in "…"

  Scenario: The candidates that come with a note are checked like any list
    Given a strategy "sloppy" that returns a note with a string for candidates
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "sloppy" says error with a reason mentioning "returned str, expected a list of Candidate"
    And the context holds the fragment "split"

  Scenario: What a strategy proposes beyond its allocation only fills the room left over
    Given a strategy "greedy" that proposes 6 fragments of about 100 tokens each
    When I ask for "how is the budget split?" within 400 tokens
    Then the report of "greedy" says ok with a reason mentioning "beyond its allocation of"
    And the report of "greedy" shows 6 candidates proposed
    And the context holds the fragment "split"
    And the context holds the fragment "caps"
    And the context uses at most the budget

  Scenario: A strategy whose backend the store lacks is skipped with a reason
    Given a strategy "vision" that needs the "vector" backend
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "vision" says skipped with a reason mentioning "needs backend vector"
    And the report of "simple-keyword" says skipped with a reason mentioning "needs backend text"
    And the context holds the fragment "split"

  Scenario: A strategy whose confidence check raises is reported as an error
    Given a strategy "fussy" whose confidence check raises KeyError "language"
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "fussy" says error with a reason mentioning "can_handle raised KeyError"
    And the context holds the fragment "split"

  Scenario: Each assembly logs one event per strategy and one for the assembly
    Given a strategy "fragile" that raises ValueError "index corrupt"
    And verbose logging
    When I ask for "how is the budget split?" within 500 tokens while capturing the log
    Then the log has exactly one "strategy" event for each of "breadth-depth-navigator, fragile, recency, relevance, semantic-embedding, simple-keyword, steady, tiered"
    And every "strategy" event carries "strategy, status, reason, elapsed_ms, proposed, accepted, allocated_tokens, used_tokens"
    And the "strategy" event of "steady" says status "ok", proposed 2 and accepted 2
    And the "strategy" event of "fragile" says status "error"
    And the log has exactly one "assembled" event, with the budget and the tokens used

  Scenario: A strategy whose confidence is out of range is reported as an error
    Given a strategy "overconfident" with confidence 1.5 that proposes:
      | fragment | path     | lines | text                 |
      | boast    | boast.md | 1-2   | Trust me completely. |
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "overconfident" says error with a reason mentioning "can_handle returned 1.5, expected a value in [0, 1]"
    And the context does not hold the fragment "boast"
    And the context holds the fragment "split"

  Scenario: A strategy disabled in config is skipped with a reason
    Given a strategy "dormant" that proposes:
      | fragment | path     | lines | text                   |
      | asleep   | sleep.md | 1-2   | Nobody should see this. |
    When I ask for "how is the budget split?" within 500 tokens
    Then the report of "dormant" says skipped with a reason mentioning "disabled in config"
    And the context does not hold the fragment "asleep"
    And the context holds the fragment "split"

  Scenario: A request can give a strategy weight 0 to skip it
    When I ask for "how is the budget split?" within 500 tokens giving "steady" weight 0
    Then the report of "steady" says skipped with a reason mentioning "weight is 0"
    And the context is empty

  Scenario: A request naming an unknown strategy is refused with the registered ones
    When I ask for "how is the budget split?" within 500 tokens using only the strategy "psychic"
    Then the assembly fails with ContextpipeError saying "unknown strategy 'psychic' in request; registered: breadth-depth-navigator, recency, relevance, semantic-embedding, simple-keyword, steady, tiered"

  Scenario: A request with a blank query is refused
    When I ask for "   " within 500 tokens
    Then the assembly fails with ContextpipeError saying "request query: query must contain some text (got '   ')"
