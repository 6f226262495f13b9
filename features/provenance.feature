Feature: Each fragment says when its source changed and what exactly was read
  In a git repository a fragment's `source.modified_at` is the time of the last commit that
  touched its file, and `metadata["read_at"]` is `commit:<hash>` of that commit. A file with
  uncommitted changes, a file git does not track, and any file outside a git repository
  record their modification time and `sha256:<hash of the content>` instead.

  Background:
    Given a file "shop/models.py" containing:
      """
      class Order:
          def total(self) -> int:
              return 0
      """
    And a file "docs/guide.md" containing:
      """
      # Guide

      Orders have a total.
      """

  Scenario: Fragments of committed files carry the time and hash of the file's last commit
    Given the project is a git repository
    And everything is committed on "2024-01-02T03:04:05+00:00"
    And "docs/guide.md" is changed on "2024-02-01T00:00:00+00:00" to:
      """
      # Guide

      Orders have a total and a label.
      """
    And everything is committed on "2024-03-04T07:06:07+02:00"
    When I index the project
    Then every fragment of "shop/models.py" says it was modified on "2024-01-02T03:04:05+00:00" by that commit
    And every fragment of "docs/guide.md" says it was modified on "2024-03-04T07:06:07+02:00" by that commit

  Scenario: A file changed since its last commit records its modification time and content hash
    Given the project is a git repository
    And everything is committed on "2024-01-02T03:04:05+00:00"
    And the project is indexed
    When "docs/guide.md" is changed on "2025-05-06T07:08:09+00:00" to:
      """
      # Guide

      Orders have a total, a label and a date.
      """
    And I index the project
    Then every fragment of "docs/guide.md" says it was modified on "2025-05-06T07:08:09+00:00" and read with the sha256 of its content
    And every fragment of "shop/models.py" says it was modified on "2024-01-02T03:04:05+00:00" by that commit

  Scenario: A file git does not track records its modification time and content hash
    Given the project is a git repository
    And everything is committed on "2024-01-02T03:04:05+00:00"
    And a file last modified on "2024-06-07T08:09:10+00:00", "docs/draft.md", containing:
      """
      # Draft

      Not committed yet.
      """
    When I index the project
    Then every fragment of "docs/draft.md" says it was modified on "2024-06-07T08:09:10+00:00" and read with the sha256 of its content
    And every fragment of "docs/guide.md" says it was modified on "2024-01-02T03:04:05+00:00" by that commit

  Scenario: Outside a git repository every file records its modification time and content hash
    Given the project folder is not in a git repository
    And a file last modified on "2023-11-12T13:14:15+00:00", "notes/todo.txt", containing:
      """
      Ship the guide.
      """
    When I index the project
    Then every fragment of "notes/todo.txt" says it was modified on "2023-11-12T13:14:15+00:00" and read with the sha256 of its content
