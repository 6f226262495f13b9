Feature: Recall of conversational memory, measured on LoCoMo-format files
  `contextpipe eval locomo FILE` remembers each conversation of a LoCoMo-format file as a
  user's memory, turn by turn with its session's time, asks each question as of the
  conversation's last session, and reports recall@5/10/25 of the evidence turns: over
  categories 1-4 overall and per category, category 5 (adversarial) apart, for the default
  mix and for each strategy alone. Malformed evidence ids are normalised; a question left
  without valid evidence is skipped and counted.

  Background:
    Given a LoCoMo file "tiny.json" with the conversation "conv-1" of the sessions:
      | session | time                      | id   | speaker | text                                            |
      | 1       | 1:56 pm on 8 May, 2023    | D1:1 | Ann     | I adopted a greyhound called Pixel last week.   |
      | 1       | 1:56 pm on 8 May, 2023    | D1:2 | Ben     | Lovely! I started pottery classes on Mondays.   |
      | 1       | 1:56 pm on 8 May, 2023    | D1:3 | Ann     | My sister lives in Lisbon near the river.       |
      | 2       | 10:00 am on 2 June, 2023  | D2:1 | Ann     | Pixel won a race at the park yesterday.         |
      | 2       | 10:00 am on 2 June, 2023  | D2:2 | Ben     | My pottery bowl cracked in the kiln.            |
      | 2       | 10:00 am on 2 June, 2023  | D2:3 | Ann     | The weather in Lisbon was sunny for my visit.   |
    And the questions of "conv-1":
      | question                                      | category | evidence     |
      | What is the name of Ann's greyhound?          | 4        | ["D1:1"]     |
      | What happened to Ben's pottery in the kiln?   | 1        | ["D1:2; D2:2"] |
      | When did Pixel win a race at the park?        | 2        | ["D:2:1"]    |
      | Where does Ann's sister live, Lisbon?         | 3        | ["D1:03"]    |
      | What colour is Ben's kiln?                    | 5        | ["D2:2"]     |
      | Who won the lottery?                          | 4        | ["D9:9"]     |

  Scenario: Recall of the evidence turns, per category, with the adversarial category apart
    When the LoCoMo file "tiny.json" is evaluated without vectors
    Then 4 questions were measured over categories 1-4, and 1 was skipped without valid evidence
    And the categories measured are "multi-hop, temporal, open-domain, single-hop, adversarial", each with 1 question
    And simple-keyword alone has recall@5 1.0, recall@10 1.0 and recall@25 1.0
    And the JSON keys are "questions, recall@5, recall@10, recall@25, by_category, skipped, per_strategy"

  Scenario Outline: Evidence ids are normalised
    Then the evidence "<raw>" reads "<ids>"

    Examples:
      | raw          | ids          |
      | D8:6; D9:17  | D8:6, D9:17  |
      | D:11:26      | D11:26       |
      | D30:05       | D30:5        |
      | D1:3         | D1:3         |

  Scenario: A file that is not LoCoMo's format stops with one line naming the sample and key
    Given a file "broken.json" containing:
      """
      [{"sample_id": "x", "conversation": {"session_1": [], "session_1_date_time": "May 8th"}, "qa": []}]
      """
    When the LoCoMo file "broken.json" is read
    Then it fails saying "broken.json: sample 'x': session_1_date_time: 'May 8th' is not a time like"

  Scenario: A turn that shares a photo is remembered with the photo's caption, not its search query
    Given a file "photo.json" containing:
      """
      [{"sample_id": "p", "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Look at this!", "blip_caption": "a photo of a dog on a beach", "query": "greyhound beach"}]},
       "qa": []}]
      """
    When the LoCoMo file "photo.json" is read
    Then the turn "D1:1" of "p" reads "Look at this! [shares a photo of a dog on a beach]", said by "Ann" at "2023-05-08T13:56:00+00:00"
