Feature: The UKO graph connects code and documents with typed edges
  Indexing records the edges each file declares (imports, calls, references, base classes,
  links, names in backticks), and `contextpipe.stores.graph.load_graph(store)` resolves them into a
  networkx MultiDiGraph whose edge keys are the edge types: `contains` (repository,
  directories, files, definitions, sections), `imports` (to the module file when it is in
  the repository), `calls`, `references` and `inherits` (by name: same file, else a file it
  imports, else the only definition of that name), `links_to` (a markdown link to another
  indexed file) and `mentions` (a document naming a code symbol in backticks).

  Background: a small shop in Python, JavaScript, TypeScript, C and Java, with its guide
    Given a file "shop/__init__.py" containing:
      '''
      """The shop package."""

      from shop import models
      '''
    And a file "shop/models.py" containing:
      '''
      """Domain models of the shop."""


      class Entity:
          """Something with an identity."""


      class Order(Entity):
          """An order placed by a customer."""

          def __init__(self, total: int) -> None:
              self.total = total

          @property
          def label(self) -> str:
              return format_label(self.total)


      def format_label(total: int) -> str:
          return f"#{total}"
      '''
    And a file "shop/pricing.py" containing:
      """
      from .models import Order


      def apply_discount(order: Order, percent: int) -> int:
          return order.total * (100 - percent) // 100
      """
    And a file "shop/checkout.py" containing:
      """
      import json

      import shop.pricing
      from . import pricing
      from .models import Order


      def checkout(order: Order) -> str:
          total = pricing.apply_discount(order, 10)
          return json.dumps({"total": total, "label": order.label})
      """
    And a file "shop/cli/main.py" containing:
      """
      from shop import pricing

      from ..checkout import checkout
      from ..models import Order


      def main() -> None:
          print(checkout(Order(100)), pricing.__name__)
      """
    And a file "legacy/pricing.py" containing:
      """
      def apply_discount(order, percent):
          return order.total
      """
    And a file "web/format.js" containing:
      """
      export function formatPrice(cents) {
        return (cents / 100).toFixed(2);
      }
      """
    And a file "web/cart.js" containing:
      """
      import React from 'react';
      import { formatPrice } from './format.js';
      import { Button } from './components';

      export class Cart {
        total() {
          return formatPrice(this.items.length * 100);
        }
      }
      """
    And a file "web/components/index.ts" containing:
      """
      export class Button {}
      """
    And a file "web/base.ts" containing:
      """
      export abstract class Base {
        abstract describe(): string;
      }
      """
    And a file "web/shapes.ts" containing:
      """
      import { Base } from './base';

      export interface Shape {
        area(): number;
      }

      export class Square extends Base implements Shape {
        area(): number {
          return 4;
        }
      }
      """
    And a file "c/geometry.h" containing:
      """
      struct point {
          int x;
          int y;
      };

      int manhattan(struct point a, struct point b);
      """
    And a file "c/geometry.c" containing:
      """
      #include <stdlib.h>
      #include "geometry.h"

      static int distance(int a, int b) {
          return abs(a - b);
      }

      int manhattan(struct point a, struct point b) {
          return distance(a.x, b.x) + distance(a.y, b.y);
      }
      """
    And a file "c/app/main.c" containing:
      """
      #include <stdio.h>
      #include "../geometry.h"

      int main(void) {
          struct point a = {0, 0};
          struct point b = {3, 4};
          printf("%d\n", manhattan(a, b));
          return 0;
      }
      """
    And a file "java/com/acme/zoo/Animal.java" containing:
      """
      package com.acme.zoo;

      public abstract class Animal {
          public abstract String sound();
      }
      """
    And a file "java/com/acme/zoo/Pet.java" containing:
      """
      package com.acme.zoo;

      public interface Pet {
          String sound();
      }
      """
    And a file "java/com/acme/zoo/Dog.java" containing:
      """
      package com.acme.zoo;

      import com.acme.util.Names;

      public class Dog extends Animal implements Pet {
          @Override
          public String sound() {
              return Names.shout("woof");
          }
      }
      """
    And a file "java/com/acme/util/Names.java" containing:
      """
      package com.acme.util;

      public final class Names {
          public static String shout(String text) {
              return text.toUpperCase();
          }
      }
      """
    And a file "docs/guide.md" containing:
      """
      # Shop guide

      The shop sells things. It has a cart.

      ## Orders

      Every `Order` has a total. Discounts are in [pricing](pricing.md#discounts).
      The code is in [the models](../shop/models.py), the rest [on the web](https://example.com/shop).

      ### Labels

      Labels come from `format_label()`. Prices use `apply_discount`.
      """
    And a file "docs/pricing.md" containing:
      """
      # Pricing

      ## Discounts

      Discounts apply at checkout.
      """
    And a file "README.md" containing:
      """
      # Shop

      Read the [guide](docs/guide.md).
      """

  Scenario: Python imports, absolute and relative, resolve to the module files of the repository
    When I index the project
    Then the imports edges from "uko://code/shop/checkout.py" go to:
      | to                               |
      | uko://code/shop/models.py        |
      | uko://code/shop/pricing.py       |
    And the imports edges from "uko://code/shop/pricing.py" go to:
      | to                               |
      | uko://code/shop/models.py        |
    And the imports edges from "uko://code/shop/cli/main.py" go to:
      | to                               |
      | uko://code/shop/checkout.py      |
      | uko://code/shop/models.py        |
      | uko://code/shop/pricing.py       |

  Scenario: "from pkg import submodule" imports the submodule, not the package
    When I index the project
    Then the imports edges from "uko://code/shop/__init__.py" go to:
      | to                        |
      | uko://code/shop/models.py |
    And the graph has none of these edges:
      | from                         | type    | to                          |
      | uko://code/shop/cli/main.py  | imports | uko://code/shop/__init__.py |

  Scenario: JavaScript and TypeScript relative imports resolve with or without an extension, and to index files
    When I index the project
    Then the imports edges from "uko://code/web/cart.js" go to:
      | to                                |
      | uko://code/web/format.js          |
      | uko://code/web/components/index.ts |
    And the imports edges from "uko://code/web/shapes.ts" go to:
      | to                       |
      | uko://code/web/base.ts   |

  Scenario: C includes in quotes resolve next to the file; system headers do not
    When I index the project
    Then the imports edges from "uko://code/c/geometry.c" go to:
      | to                        |
      | uko://code/c/geometry.h   |
    And the imports edges from "uko://code/c/app/main.c" go to:
      | to                        |
      | uko://code/c/geometry.h   |

  Scenario: Java imports resolve to the class file by its package path
    When I index the project
    Then the imports edges from "uko://code/java/com/acme/zoo/Dog.java" go to:
      | to                                        |
      | uko://code/java/com/acme/util/Names.java  |

  Scenario: Go imports resolve to the package's directory, Rust use paths to the module file
    Given a file "goshop/store/price.go" containing:
      """
      package store

      func Price() int {
          return 1
      }
      """
    And a file "goshop/cmd/main.go" containing:
      """
      package main

      import (
          "fmt"

          "example.com/goshop/store"
      )

      func main() {
          fmt.Println(store.Price())
      }
      """
    And a file "rs/src/lib.rs" containing:
      """
      pub mod shapes;

      use crate::shapes::circle::Circle;

      pub fn unit_circle() -> Circle {
          Circle::new(1.0)
      }
      """
    And a file "rs/src/shapes/circle.rs" containing:
      """
      pub struct Circle {
          r: f64,
      }

      impl Circle {
          pub fn new(r: f64) -> Self {
              Circle { r }
          }
      }
      """
    When I index the project
    Then the graph has these edges:
      | from                               | type    | to                                            |
      | uko://code/goshop/cmd/main.go      | imports | uko://code/goshop/store/price.go              |
      | uko://code/goshop/cmd/main.go#main | calls   | uko://code/goshop/store/price.go#Price        |
      | uko://code/rs/src/lib.rs           | imports | uko://code/rs/src/shapes/circle.rs            |
      | uko://code/rs/src/lib.rs#unit_circle | calls | uko://code/rs/src/shapes/circle.rs#Circle.new |

  Scenario: Calls resolve in the same file, and across files through what the caller imports
    When I index the project
    Then the graph has these edges:
      | from                                              | type  | to                                                   |
      | uko://code/shop/models.py#Order.label             | calls | uko://code/shop/models.py#format_label               |
      | uko://code/shop/checkout.py#checkout              | calls | uko://code/shop/pricing.py#apply_discount            |
      | uko://code/shop/cli/main.py#main                  | calls | uko://code/shop/checkout.py#checkout                 |
      | uko://code/shop/cli/main.py#main                  | calls | uko://code/shop/models.py#Order                      |
      | uko://code/c/geometry.c#manhattan                 | calls | uko://code/c/geometry.c#distance                     |
      | uko://code/c/app/main.c#main                      | calls | uko://code/c/geometry.c#manhattan                    |
      | uko://code/web/cart.js#Cart.total                 | calls | uko://code/web/format.js#formatPrice                 |
      | uko://code/java/com/acme/zoo/Dog.java#Dog.sound   | calls | uko://code/java/com/acme/util/Names.java#Names.shout |
    And the graph has none of these edges:
      | from                                 | type  | to                                          |
      | uko://code/shop/checkout.py#checkout | calls | uko://code/legacy/pricing.py#apply_discount |

  Scenario: A name reached through another library, or a builtin type's method, is not bound to a definition of the project the file cannot see
    # Names were resolved by their last part alone: `math.floor(best)`, `totals.values()`,
    # `round_up` (math's ceil), `ast.NodeVisitor` and pathlib's `Path` became uses of the
    # project's `Money.floor`, `Money.values`, `ceil`, `NodeVisitor` and `Path`. A builtin
    # type's method (`values`) binds only to a definition the calling file can see.
    Given a file "shop/money.py" containing:
      '''
      class Money:
          def floor(self) -> int:
              return int(self.amount)

          def values(self) -> list[int]:
              return [self.amount]


      class NodeVisitor:
          """Visits the shop's nodes."""


      class Path:
          """A path through the shop."""


      def ceil(amount: float) -> int:
          return int(amount) + 1
      '''
    And a file "shop/totals.py" containing:
      '''
      import ast
      import math
      from math import ceil as round_up
      from pathlib import Path


      def summarise(totals: dict[str, float], where: Path) -> int:
          best = max(totals.values())
          return math.floor(best) + round_up(best) + len(totals)


      class Walker(ast.NodeVisitor):
          """Walks a syntax tree."""
      '''
    And a file "shop/till.py" containing:
      '''
      from . import money
      from .money import Money


      def in_money(amount: float) -> int:
          return Money(amount).floor() + money.Money.floor(Money(amount)) + money.ceil(amount)


      def amounts(till: Money) -> list[int]:
          return till.values()
      '''
    When I index the project
    Then the graph has none of these edges:
      | from                                 | type       | to                                     |
      | uko://code/shop/totals.py#summarise  | calls      | uko://code/shop/money.py#Money.floor   |
      | uko://code/shop/totals.py#summarise  | calls      | uko://code/shop/money.py#Money.values  |
      | uko://code/shop/totals.py#summarise  | calls      | uko://code/shop/money.py#ceil          |
      | uko://code/shop/totals.py#summarise  | references | uko://code/shop/money.py#Path          |
      | uko://code/shop/totals.py#Walker     | inherits   | uko://code/shop/money.py#NodeVisitor   |
    And the graph has these edges:
      | from                               | type  | to                                    |
      | uko://code/shop/till.py#in_money   | calls | uko://code/shop/money.py#Money        |
      | uko://code/shop/till.py#in_money   | calls | uko://code/shop/money.py#Money.floor  |
      | uko://code/shop/till.py#in_money   | calls | uko://code/shop/money.py#ceil         |
      | uko://code/shop/till.py#amounts    | calls | uko://code/shop/money.py#Money.values |

  Scenario: Base classes, extends and implements become inherits edges
    When I index the project
    Then the only edges of type "inherits" in the graph are:
      | from                                  | type     | to                                          |
      | uko://code/shop/models.py#Order       | inherits | uko://code/shop/models.py#Entity            |
      | uko://code/web/shapes.ts#Square       | inherits | uko://code/web/base.ts#Base                 |
      | uko://code/web/shapes.ts#Square       | inherits | uko://code/web/shapes.ts#Shape              |
      | uko://code/java/com/acme/zoo/Dog.java#Dog | inherits | uko://code/java/com/acme/zoo/Animal.java#Animal |
      | uko://code/java/com/acme/zoo/Dog.java#Dog | inherits | uko://code/java/com/acme/zoo/Pet.java#Pet       |

  Scenario: Type names used in a definition become references edges
    When I index the project
    Then the graph has these edges:
      | from                                      | type       | to                              |
      | uko://code/shop/checkout.py#checkout      | references | uko://code/shop/models.py#Order |
      | uko://code/shop/pricing.py#apply_discount | references | uko://code/shop/models.py#Order |
      | uko://code/c/app/main.c#main              | references | uko://code/c/geometry.h#point   |
      | uko://code/c/geometry.c#manhattan         | references | uko://code/c/geometry.h#point   |

  Scenario: Markdown links to indexed files become links_to edges; web links do not
    When I index the project
    Then the only edges of type "links_to" in the graph are:
      | from                              | type     | to                        |
      | uko://doc/docs/guide.md#orders    | links_to | uko://doc/docs/pricing.md |
      | uko://doc/docs/guide.md#orders    | links_to | uko://code/shop/models.py |
      | uko://doc/README.md#shop          | links_to | uko://doc/docs/guide.md   |

  Scenario: A document naming a code symbol in backticks mentions it, unless the name is ambiguous
    When I index the project
    Then the only edges of type "mentions" in the graph are:
      | from                           | type     | to                                     |
      | uko://doc/docs/guide.md#orders | mentions | uko://code/shop/models.py#Order        |
      | uko://doc/docs/guide.md#labels | mentions | uko://code/shop/models.py#format_label |

  Scenario: The repository contains directories, directories contain files, files their definitions and sections
    When I index the project
    Then the graph has these edges:
      | from                            | type     | to                                    |
      | uko://repo/                     | contains | uko://dir/shop/                       |
      | uko://repo/                     | contains | uko://doc/README.md                   |
      | uko://dir/shop/                 | contains | uko://dir/shop/cli/                   |
      | uko://dir/shop/                 | contains | uko://code/shop/models.py             |
      | uko://dir/shop/cli/             | contains | uko://code/shop/cli/main.py           |
      | uko://dir/java/com/acme/zoo/    | contains | uko://code/java/com/acme/zoo/Dog.java |
      | uko://code/shop/models.py       | contains | uko://code/shop/models.py#Order       |
      | uko://code/shop/models.py#Order | contains | uko://code/shop/models.py#Order.label |
      | uko://doc/docs/guide.md         | contains | uko://doc/docs/guide.md#shop-guide    |
      | uko://doc/docs/guide.md#shop-guide | contains | uko://doc/docs/guide.md#orders     |
      | uko://doc/docs/guide.md#orders  | contains | uko://doc/docs/guide.md#labels        |
    And the graph has none of these edges:
      | from        | type     | to                        |
      | uko://repo/ | contains | uko://code/shop/models.py |

  Scenario: The neighbourhood of a module shows every edge within one hop
    When I index the project
    Then the neighbourhood of "uko://code/shop/pricing.py" within 1 hop is:
      | from                                 | type     | to                                        |
      | uko://code/shop/checkout.py          | imports  | uko://code/shop/pricing.py                |
      | uko://code/shop/cli/main.py          | imports  | uko://code/shop/pricing.py                |
      | uko://code/shop/pricing.py           | contains | uko://code/shop/pricing.py#apply_discount |
      | uko://code/shop/pricing.py           | contains | uko://code/shop/pricing.py#module         |
      | uko://code/shop/pricing.py           | imports  | uko://code/shop/models.py                 |
      | uko://dir/shop/                      | contains | uko://code/shop/pricing.py                |

  Scenario: A Java class extends a class of another file that has a constructor
    Given a file "java/com/acme/zoo/Animal.java" containing:
      """
      package com.acme.zoo;

      public abstract class Animal {
          protected Animal() {
          }

          public abstract String sound();
      }
      """
    When I index the project
    Then the graph has these edges:
      | from                                      | type     | to                                              |
      | uko://code/java/com/acme/zoo/Dog.java#Dog | inherits | uko://code/java/com/acme/zoo/Animal.java#Animal |

  Scenario: C++ code uses a class of a header that has a constructor
    Given a file "cpp/shapes.hpp" containing:
      """
      class Circle {
      public:
          explicit Circle(double r) : r_(r) {}
          double area() const { return 3.14159 * r_ * r_; }

      private:
          double r_;
      };
      """
    And a file "cpp/main.cpp" containing:
      """
      #include "shapes.hpp"

      int main() {
          Circle circle(2.0);
          return static_cast<int>(circle.area());
      }
      """
    When I index the project
    Then the graph has these edges:
      | from                        | type       | to                                   |
      | uko://code/cpp/main.cpp     | imports    | uko://code/cpp/shapes.hpp            |
      | uko://code/cpp/main.cpp#main | calls     | uko://code/cpp/shapes.hpp#Circle.area |
      | uko://code/cpp/main.cpp#main | references | uko://code/cpp/shapes.hpp#Circle     |

  Scenario: A package at the root of the project imports its submodules relatively
    Given a file "__init__.py" containing:
      """
      from . import decoder
      from .scanner import scan
      """
    And a file "decoder.py" containing:
      """
      def decode(text):
          return text
      """
    And a file "scanner.py" containing:
      """
      def scan(text):
          return text
      """
    When I index the project
    Then the imports edges from "uko://code/__init__.py" go to:
      | to                      |
      | uko://code/decoder.py   |
      | uko://code/scanner.py   |

  Scenario: The counts agree with the graph when a file declares one edge many times
    Given a file "tree/__init__.py" containing:
      """
      """
    And a file "tree/walk.py" containing:
      """
      import tree.visit
      from tree import visit
      from tree.visit import visit_node


      def walk(node):
          walk(node.left)
          walk(node.right)
          visit_node(node)
          return visit_node(node)
      """
    And a file "tree/visit.py" containing:
      """
      def visit_node(node):
          return node
      """
    When I index the project
    Then the imports edges from "uko://code/tree/walk.py" go to:
      | to                         |
      | uko://code/tree/visit.py   |
    And the calls edges from "uko://code/tree/walk.py#walk" go to:
      | to                                  |
      | uko://code/tree/visit.py#visit_node |
    And the graph counts the nodes and edges it holds

  Scenario: A store of layout 12 parses its Python files again, and binds no name to what another library defines
    # Layout 12 declared `math.floor(...)` as a call of any `floor`; a store upgraded
    # without parsing its Python files again would keep that edge.
    Given a file "shop/money.py" containing:
      """
      class Money:
          def floor(self) -> int:
              return int(self.amount)
      """
    And a file "shop/totals.py" containing:
      """
      import math


      def summarise(best: float) -> int:
          return math.floor(best)
      """
    And the project is indexed
    And the store is turned back into layout 12, as the previous version wrote it
    When I ask for "order" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 12, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 8     |
    And the graph has none of these edges:
      | from                                | type  | to                                   |
      | uko://code/shop/totals.py#summarise | calls | uko://code/shop/money.py#Money.floor |
    And the store holds the resolved graph of its current state

  Scenario: A store of layout 7 is upgraded in place, parses its Python files again, and holds the same graph
    Given the project is indexed
    And the graph's edges and counts are noted
    And the store is turned back into layout 7, as the previous version wrote it
    When I ask for "order" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 7, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 6     |
    And the graph's edges and counts are the ones noted

  Scenario: A store of layout 9 is upgraded in place, parses its Python files again, resolves its graph once and holds the same graph
    Given the project is indexed
    And the graph's edges and counts are noted
    And the store is turned back into layout 9, as the previous version wrote it
    When I ask for "order" within 400 tokens
    Then the assembly fails with StoreError saying "index has layout 9, this contextpipe reads 13; run `contextpipe index PATH` to upgrade or rebuild it"
    When I index the project
    Then the index summary counts:
      | what            | count |
      | files indexed   | 6     |
    And the graph's edges and counts are the ones noted
    And the store holds the resolved graph of its current state
