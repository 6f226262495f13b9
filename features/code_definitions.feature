Feature: Code is parsed into definitions, each at three detail depths
  `contextpipe index` parses source code with a real parser (tree-sitter grammars for
  JavaScript, TypeScript, Go, Rust, Java, C and C++; Python too) into UKO nodes: the file
  as a module, and every class, function, method, struct, interface, trait or impl in it,
  named `uko://code/<path>#<qualified name>` with its line span. Methods sit inside their
  class. Each node has a fragment at depth 9 (the full source), 4 (a skeleton: signature,
  decorators, docstring summary; a class adds its methods' signatures) and 0 (one line:
  kind, qualified name, path:lines).

  Background:
    Given a file "shop/models.py" containing:
      '''
      """Domain models of the shop."""

      from dataclasses import dataclass


      class Entity:
          """Something with an identity."""

          def key(self) -> str:
              return str(id(self))


      @dataclass
      class Order(Entity):
          """An order placed by a customer.

          It keeps a running total.
          """

          total: int

          @property
          def label(self) -> str:
              """A short label for receipts."""
              return format_label(self.total)

          async def refresh(self) -> None:
              self.total = await fetch_total(self)


      def format_label(total: int) -> str:
          """Format a total for a receipt."""

          def pad(text: str) -> str:
              return text.rjust(8)

          return pad(f"#{total}")
      '''

  Scenario: Python classes, methods, decorated definitions and nested functions
    When I index the project
    Then the definitions in "shop/models.py" are:
      | uri                                         | kind     | lines |
      | uko://code/shop/models.py#Entity            | class    | 6-10  |
      | uko://code/shop/models.py#Entity.key        | method   | 9-10  |
      | uko://code/shop/models.py#Order             | class    | 13-28 |
      | uko://code/shop/models.py#Order.label       | method   | 22-25 |
      | uko://code/shop/models.py#Order.refresh     | method   | 27-28 |
      | uko://code/shop/models.py#format_label      | function | 31-37 |
      | uko://code/shop/models.py#format_label.pad  | function | 34-35 |
    And the graph has these edges:
      | from                                 | type     | to                                          |
      | uko://code/shop/models.py            | contains | uko://code/shop/models.py#Entity            |
      | uko://code/shop/models.py#Entity     | contains | uko://code/shop/models.py#Entity.key        |
      | uko://code/shop/models.py#Order      | contains | uko://code/shop/models.py#Order.label       |
      | uko://code/shop/models.py#Order      | contains | uko://code/shop/models.py#Order.refresh     |
      | uko://code/shop/models.py#format_label | contains | uko://code/shop/models.py#format_label.pad |
    And the full text of "uko://code/shop/models.py#Order" starts with "@dataclass" and ends with "await fetch_total(self)"
    And the full text of "uko://code/shop/models.py#Order.label" starts with "    @property" and ends with "format_label(self.total)"

  Scenario: A Python class at depth 4 is its decorators, signature, docstring summary and its methods' signatures
    When I index the project
    Then the text of "uko://code/shop/models.py#Order" at depth 4 is:
      """
      @dataclass
      class Order(Entity):
          An order placed by a customer.
          @property
          def label(self) -> str:
              A short label for receipts.
          async def refresh(self) -> None:
      """
    And the text of "uko://code/shop/models.py#Order" at depth 0 is:
      """
      class Order (shop/models.py:13-28)
      """
    And the text of "uko://code/shop/models.py#Order.label" at depth 0 is:
      """
      method Order.label (shop/models.py:22-25)
      """

  Scenario: A Python function at each depth
    When I index the project
    Then the text of "uko://code/shop/models.py#format_label" at depth 9 is:
      '''
      def format_label(total: int) -> str:
          """Format a total for a receipt."""

          def pad(text: str) -> str:
              return text.rjust(8)

          return pad(f"#{total}")
      '''
    And the text of "uko://code/shop/models.py#format_label" at depth 4 is:
      """
      def format_label(total: int) -> str:
          Format a total for a receipt.
          def pad(text: str) -> str:
      """
    And the text of "uko://code/shop/models.py#format_label" at depth 0 is:
      """
      function format_label (shop/models.py:31-37)
      """

  Scenario: A module at depth 4 lists its imports and top-level signatures
    When I index the project
    Then the text of "uko://code/shop/models.py" at depth 4 is:
      """
      from dataclasses import dataclass
      class Entity:
          Something with an identity.
      @dataclass
      class Order(Entity):
          An order placed by a customer.
      def format_label(total: int) -> str:
          Format a total for a receipt.
      """
    And the text of "uko://code/shop/models.py" at depth 0 is:
      """
      module shop/models.py (shop/models.py:1-37)
      """

  Scenario: JavaScript classes, methods, functions and arrow functions
    Given a file "web/cart.js" containing:
      """
      import { formatPrice } from './format.js';

      export class Cart {
        constructor() {
          this.items = [];
        }

        add(item) {
          this.items.push(item);
        }

        total() {
          return formatPrice(this.items.reduce((sum, item) => sum + item.price, 0));
        }
      }

      export function emptyCart() {
        return new Cart();
      }

      const describe = (cart) => `${cart.items.length} items`;
      """
    When I index the project
    Then the definitions in "web/cart.js" are:
      | uri                                   | kind     | lines |
      | uko://code/web/cart.js#Cart           | class    | 3-15  |
      | uko://code/web/cart.js#Cart.constructor | method | 4-6   |
      | uko://code/web/cart.js#Cart.add       | method   | 8-10  |
      | uko://code/web/cart.js#Cart.total     | method   | 12-14 |
      | uko://code/web/cart.js#emptyCart      | function | 17-19 |
      | uko://code/web/cart.js#describe       | function | 21-21 |
    And the text of "uko://code/web/cart.js#Cart" at depth 4 is:
      """
      export class Cart {
        constructor() {
        add(item) {
        total() {
      """

  Scenario: TypeScript interfaces, type aliases, classes and enums
    Given a file "web/shapes.ts" containing:
      """
      import { Base } from './base';

      export interface Shape {
        area(): number;
      }

      export type Unit = 'cm' | 'in';

      export class Square extends Base implements Shape {
        constructor(private side: number) {
          super();
        }

        area(): number {
          return this.side * this.side;
        }
      }

      export enum Color {
        Red,
        Blue,
      }
      """
    And a file "web/base.ts" containing:
      """
      export abstract class Base {
        abstract describe(): string;
      }
      """
    When I index the project
    Then the definitions in "web/shapes.ts" are:
      | uri                                        | kind      | lines |
      | uko://code/web/shapes.ts#Shape             | interface | 3-5   |
      | uko://code/web/shapes.ts#Shape.area        | method    | 4-4   |
      | uko://code/web/shapes.ts#Unit              | type      | 7-7   |
      | uko://code/web/shapes.ts#Square            | class     | 9-17  |
      | uko://code/web/shapes.ts#Square.constructor | method   | 10-12 |
      | uko://code/web/shapes.ts#Square.area       | method    | 14-16 |
      | uko://code/web/shapes.ts#Color             | enum      | 19-22 |
    And the definitions in "web/base.ts" are:
      | uri                                 | kind   | lines |
      | uko://code/web/base.ts#Base          | class  | 1-3   |
      | uko://code/web/base.ts#Base.describe | method | 2-2   |

  Scenario: Go structs, interfaces, methods and functions
    Given a file "store/item.go" containing:
      """
      package store

      import "fmt"

      // Item is one thing on sale.
      type Item struct {
          Name  string
          Price int
      }

      // Priced has a price.
      type Priced interface {
          Cost() int
      }

      // Cost is the item's price.
      func (i Item) Cost() int {
          return i.Price
      }

      // Describe formats anything priced.
      func Describe(p Priced) string {
          return fmt.Sprintf("%d", p.Cost())
      }
      """
    When I index the project
    Then the text of "uko://code/store/item.go#Item.Cost" at depth 4 is:
      """
      func (i Item) Cost() int {
          Cost is the item's price.
      """
    And the definitions in "store/item.go" are:
      | uri                                | kind      | lines |
      | uko://code/store/item.go#Item      | struct    | 6-9   |
      | uko://code/store/item.go#Priced    | interface | 12-14 |
      | uko://code/store/item.go#Item.Cost | method    | 17-19 |
      | uko://code/store/item.go#Describe  | function  | 22-24 |

  Scenario: Rust traits, structs, enums, impl blocks and functions
    Given a file "src/shapes.rs" containing:
      """
      use std::fmt;

      /// Something that can be drawn.
      pub trait Draw {
          fn draw(&self) -> String;
      }

      pub struct Button {
          pub label: String,
      }

      pub enum Size {
          Small,
          Large,
      }

      impl Button {
          pub fn new(label: &str) -> Self {
              Button { label: label.to_string() }
          }
      }

      impl Draw for Button {
          fn draw(&self) -> String {
              format!("[{}]", self.label)
          }
      }

      pub fn render(items: &[Box<dyn Draw>]) -> Vec<String> {
          items.iter().map(|item| item.draw()).collect()
      }
      """
    When I index the project
    Then the definitions in "src/shapes.rs" are:
      | uri                                          | kind     | lines |
      | uko://code/src/shapes.rs#Draw                | trait    | 4-6   |
      | uko://code/src/shapes.rs#Draw.draw           | method   | 5-5   |
      | uko://code/src/shapes.rs#Button              | struct   | 8-10  |
      | uko://code/src/shapes.rs#Size                | enum     | 12-15 |
      | uko://code/src/shapes.rs#Button-2            | impl     | 17-21 |
      | uko://code/src/shapes.rs#Button.new          | method   | 18-20 |
      | uko://code/src/shapes.rs#Draw_for_Button      | impl     | 23-27 |
      | uko://code/src/shapes.rs#Draw_for_Button.draw | method   | 24-26 |
      | uko://code/src/shapes.rs#render              | function | 29-31 |
    And the graph has these edges:
      | from                                     | type     | to                                            |
      | uko://code/src/shapes.rs#Button-2        | contains | uko://code/src/shapes.rs#Button.new           |
      | uko://code/src/shapes.rs#Draw_for_Button | contains | uko://code/src/shapes.rs#Draw_for_Button.draw |
      | uko://code/src/shapes.rs#render          | calls    | uko://code/src/shapes.rs#Draw.draw            |

  Scenario: Java classes, interfaces, constructors and annotated methods
    Given a file "java/com/acme/zoo/Animal.java" containing:
      """
      package com.acme.zoo;

      public abstract class Animal {
          private final String name;

          protected Animal(String name) {
              this.name = name;
          }

          public abstract String sound();

          public String describe() {
              return name + " says " + sound();
          }
      }
      """
    And a file "java/com/acme/zoo/Pet.java" containing:
      """
      package com.acme.zoo;

      public interface Pet {
          String sound();
      }
      """
    When I index the project
    Then the definitions in "java/com/acme/zoo/Animal.java" are:
      | uri                                                | kind   | lines |
      | uko://code/java/com/acme/zoo/Animal.java#Animal           | class  | 3-15  |
      | uko://code/java/com/acme/zoo/Animal.java#Animal.Animal    | method | 6-8   |
      | uko://code/java/com/acme/zoo/Animal.java#Animal.sound     | method | 10-10 |
      | uko://code/java/com/acme/zoo/Animal.java#Animal.describe  | method | 12-14 |
    And the definitions in "java/com/acme/zoo/Pet.java" are:
      | uri                                           | kind      | lines |
      | uko://code/java/com/acme/zoo/Pet.java#Pet       | interface | 3-5   |
      | uko://code/java/com/acme/zoo/Pet.java#Pet.sound | method    | 4-4   |
    And the text of "uko://code/java/com/acme/zoo/Animal.java#Animal" at depth 4 is:
      """
      public abstract class Animal {
          protected Animal(String name) {
          public abstract String sound();
          public String describe() {
      """

  Scenario: C structs and functions, in a header and its source file
    Given a file "c/geometry.h" containing:
      """
      #ifndef GEOMETRY_H
      #define GEOMETRY_H

      struct point {
          int x;
          int y;
      };

      int manhattan(struct point a, struct point b);

      #endif
      """
    And a file "c/geometry.c" containing:
      """
      #include <stdlib.h>
      #include "geometry.h"

      /* The distance between two coordinates. */
      static int distance(int a, int b) {
          return abs(a - b);
      }

      int manhattan(struct point a, struct point b) {
          return distance(a.x, b.x) + distance(a.y, b.y);
      }
      """
    When I index the project
    Then the definitions in "c/geometry.h" are:
      | uri                            | kind   | lines |
      | uko://code/c/geometry.h#point  | struct | 4-7   |
    And the definitions in "c/geometry.c" are:
      | uri                               | kind     | lines |
      | uko://code/c/geometry.c#distance  | function | 5-7   |
      | uko://code/c/geometry.c#manhattan | function | 9-11  |
    And the text of "uko://code/c/geometry.c#distance" at depth 4 is:
      """
      static int distance(int a, int b) {
          The distance between two coordinates.
      """

  Scenario: C++ namespaces, classes with inline methods, and structs
    Given a file "cpp/shapes.hpp" containing:
      """
      #pragma once
      #include <string>

      namespace geo {

      class Shape {
      public:
          virtual ~Shape() = default;
          virtual double area() const = 0;
      };

      class Circle : public Shape {
      public:
          explicit Circle(double r) : r_(r) {}
          double area() const override { return 3.14159 * r_ * r_; }

      private:
          double r_;
      };

      struct Point {
          double x, y;
      };

      }  // namespace geo
      """
    When I index the project
    Then the definitions in "cpp/shapes.hpp" are:
      | uri                                        | kind      | lines |
      | uko://code/cpp/shapes.hpp#geo              | namespace | 4-25  |
      | uko://code/cpp/shapes.hpp#geo.Shape        | class     | 6-10  |
      | uko://code/cpp/shapes.hpp#geo.Shape.~Shape | method    | 8-8   |
      | uko://code/cpp/shapes.hpp#geo.Circle       | class     | 12-19 |
      | uko://code/cpp/shapes.hpp#geo.Circle.Circle | method   | 14-14 |
      | uko://code/cpp/shapes.hpp#geo.Circle.area  | method    | 15-15 |
      | uko://code/cpp/shapes.hpp#geo.Point        | struct    | 21-23 |
    And the graph has these edges:
      | from                                 | type     | to                                        |
      | uko://code/cpp/shapes.hpp#geo        | contains | uko://code/cpp/shapes.hpp#geo.Circle      |
      | uko://code/cpp/shapes.hpp#geo.Circle | contains | uko://code/cpp/shapes.hpp#geo.Circle.area |
      | uko://code/cpp/shapes.hpp#geo.Circle | inherits | uko://code/cpp/shapes.hpp#geo.Shape       |

  Scenario: C++ methods defined outside their class are methods of that class
    Given a file "cpp/circle.hpp" containing:
      """
      #pragma once

      namespace geo {

      class Circle {
      public:
          explicit Circle(double r);
          double area() const;

      private:
          double r_;
      };

      }  // namespace geo
      """
    And a file "cpp/circle.cpp" containing:
      """
      #include "circle.hpp"

      namespace geo {

      Circle::Circle(double r) : r_(r) {}

      double Circle::area() const {
          return 3.14159 * r_ * r_;
      }

      }  // namespace geo
      """
    When I index the project
    Then the definitions in "cpp/circle.cpp" are:
      | uri                                        | kind      | lines |
      | uko://code/cpp/circle.cpp#geo              | namespace | 3-11  |
      | uko://code/cpp/circle.cpp#geo.Circle.Circle | method   | 5-5   |
      | uko://code/cpp/circle.cpp#geo.Circle.area  | method    | 7-9   |

  Scenario: The comment just above a function is its docstring summary in Go, C, C++ and JavaScript
    Given a file "tax/tax.go" containing:
      """
      package tax

      // Vat adds 20 % tax.
      func Vat(net float64) float64 {
          return net * 1.2
      }
      """
    And a file "c/tax.c" containing:
      """
      /* Add 20 % tax. */
      double vat(double net) {
          return net * 1.2;
      }
      """
    And a file "cpp/tax.cpp" containing:
      """
      // Taxes of one country.
      class Tax {
          int rate;
      };
      """
    And a file "lib/tax.js" containing:
      """
      // Add 20 % tax.
      function vat(net) {
        return net * 1.2;
      }
      """
    When I index the project
    Then the text of "uko://code/tax/tax.go#Vat" at depth 4 is:
      """
      func Vat(net float64) float64 {
          Vat adds 20 % tax.
      """
    And the text of "uko://code/c/tax.c#vat" at depth 4 is:
      """
      double vat(double net) {
          Add 20 % tax.
      """
    And the text of "uko://code/cpp/tax.cpp#Tax" at depth 4 is:
      """
      class Tax {
          Taxes of one country.
      """
    And the text of "uko://code/lib/tax.js#vat" at depth 4 is:
      """
      function vat(net) {
          Add 20 % tax.
      """

  Scenario: The doc comment of an exported JavaScript function is its docstring summary
    Given a file "lib/tax.js" containing:
      """
      // Add 20 % tax.
      export function vat(net) {
        return net * 1.2;
      }
      """
    When I index the project
    Then the text of "uko://code/lib/tax.js#vat" at depth 4 is:
      """
      export function vat(net) {
          Add 20 % tax.
      """

  Scenario: The doc comment of an exported TypeScript interface is its docstring summary
    Given a file "lib/tax.ts" containing:
      """
      /** Taxes of one country. */
      export interface Tax {
        rate: number;
      }
      """
    When I index the project
    Then the text of "uko://code/lib/tax.ts#Tax" at depth 4 is:
      """
      export interface Tax {
          Taxes of one country.
      """

  Scenario: The doc comment of a Go type is its docstring summary
    Given a file "tax/rate.go" containing:
      """
      package tax

      // Rate is a tax rate.
      type Rate struct {
          Percent int
      }
      """
    When I index the project
    Then the text of "uko://code/tax/rate.go#Rate" at depth 4 is:
      """
      type Rate struct {
          Rate is a tax rate.
      """

  Scenario: A Rust doc comment is its docstring summary
    Given a file "src/tax.rs" containing:
      """
      /// Add 20 % tax.
      pub fn vat(net: f64) -> f64 {
          net * 1.2
      }
      """
    When I index the project
    Then the text of "uko://code/src/tax.rs#vat" at depth 4 is:
      """
      pub fn vat(net: f64) -> f64 {
          Add 20 % tax.
      """

  Scenario: A Javadoc comment is its docstring summary
    Given a file "java/com/acme/Tax.java" containing:
      """
      package com.acme;

      /** Taxes of one country. */
      public class Tax {
          int rate;
      }
      """
    When I index the project
    Then the text of "uko://code/java/com/acme/Tax.java#Tax" at depth 4 is:
      """
      public class Tax {
          Taxes of one country.
      """

  Scenario: Every code node has its three depths, and every listing names kind, name and lines
    Given a file "web/cart.js" containing:
      """
      export class Cart {
        total() {
          return 0;
        }
      }
      """
    And a file "c/util.c" containing:
      """
      int twice(int x) {
          return 2 * x;
      }
      """
    When I index the project
    Then every module, definition, document and section has fragments at depths 9, 4 and 0
    And every node's one-line listing names its kind, name, path and lines
