# frozen_string_literal: true

module PhaseoAgentSdk
  # Marks a true/false parameter: `param :urgent, PhaseoAgentSdk::Boolean`.
  module Boolean; end

  # A tool's arguments declared in Ruby instead of a hand-written JSON Schema
  # (docs/behaviour.md §20). Subclass it and list the parameters:
  #
  #   class Passenger < PhaseoAgentSdk::Params
  #     param :name, String, required: true, description: "Full name as on the passport"
  #     param :age, Integer
  #   end
  #
  #   class Booking < PhaseoAgentSdk::Params
  #     description "A flight booking request"
  #     param :origin, String, required: true, description: "IATA code"
  #     param :cabin, String, one_of: %w[economy business], default: "economy"
  #     param :passengers, Array, of: Passenger, required: true
  #     param :contact, Hash do
  #       param :email, String, required: true
  #     end
  #   end
  #
  # Types: `String`, `Integer`, `Float` (integers accepted), `PhaseoAgentSdk::Boolean`,
  # another `Params` class, `Hash` with a block (a nested object) or without (any object),
  # `Array, of: <type>` (or `Array` with a block: a list of nested objects). Options:
  # `required:`, `description:`, `one_of:` (an enum), `default:` (used when the value is
  # left out), `nullable:` (null admitted). A class may name itself (`of: self`): the schema
  # then uses `$ref`. `Booking.json_schema` is the generated schema; `Booking.decode(hash)`
  # makes an instance with a reader per parameter, raising `ArgumentError("<pointer>:
  # <reason>")` for a value the declaration does not admit.
  class Params
    # One declared parameter.
    Field = Struct.new(:name, :type, :of, :required, :description, :one_of, :default, :has_default,
                       :nullable, keyword_init: true)

    class << self
      # The declared parameters, in declaration order.
      def fields
        @fields ||= []
      end

      # Sets (or, without an argument, reads) the description of the object as a whole.
      def description(text = nil)
        @description = text.to_s unless text.nil?
        @description
      end

      # Declares a parameter (see the class comment for the types and options).
      def param(name, type, of: nil, required: false, description: nil, one_of: nil,
                default: (no_default = true; nil), nullable: false, &block)
        name = name.to_s
        raise DefinitionError, "param name must not be empty" if name.empty?
        raise DefinitionError, "param :#{name} is declared twice in #{label}" if fields.any? { |f| f.name == name }
        if Params.method_defined?(name) || Params.private_method_defined?(name)
          raise DefinitionError, "param :#{name} would hide the method #{name} of #{label}; read it with [:#{name}] " \
                                 "after declaring it under another name"
        end

        type, of = nested(name, type, of, &block)
        check_type(name, type, of)
        if one_of && (!one_of.is_a?(Array) || one_of.empty?)
          raise DefinitionError, "param :#{name}: one_of must be a non-empty Array"
        end
        fields << Field.new(name: name, type: type, of: of, required: required ? true : false,
                            description: description&.to_s, one_of: one_of, default: default,
                            has_default: !no_default, nullable: nullable ? true : false)
        define_method(name) { @values[name] }
        name.to_sym
      end

      # An anonymous `Params` class declared by the block (`Params.define { param ... }`).
      def define(&block)
        raise DefinitionError, "Params.define needs a block of param declarations" unless block

        Class.new(Params, &block)
      end

      # The JSON Schema of the declared parameters (a Hash with String keys).
      def json_schema
        Schema.new(self).root
      end

      # Decodes a JSON object (String or Symbol keys) into an instance; raises
      # `ArgumentError("<pointer>: <reason>")` when it does not fit the declaration.
      def decode(value, path = "")
        unless value.is_a?(Hash)
          raise ArgumentError, "#{Params.pointer(path)}: expected an object, got #{Params.kind(value)}"
        end

        given = value.transform_keys(&:to_s)
        values = fields.to_h { |f| [f.name, decode_field(f, given, path)] }
        instance = allocate
        instance.instance_variable_set(:@values, values)
        instance
      end

      # The name used in messages and `$defs`.
      def label
        name || "Params"
      end

      private

      def nested(name, type, of, &block)
        return [type, of] unless block

        inner = Params.define(&block)
        return [inner, nil] if type == Hash
        return [Array, inner] if type == Array && of.nil?

        raise DefinitionError, "param :#{name}: a block declares a nested object (Hash) or list (Array)"
      end

      def check_type(name, type, of)
        unless Params.scalar?(type) || type == Hash || type == Array || Params.params_class?(type)
          raise DefinitionError, "param :#{name}: unsupported type #{type.inspect} " \
                                 "(String, Integer, Float, PhaseoAgentSdk::Boolean, Hash, Array or a Params class)"
        end
        raise DefinitionError, "param :#{name}: Array needs of: <type>" if type == Array && of.nil?
        raise DefinitionError, "param :#{name}: of: is only for Array" if type != Array && !of.nil?
        return if of.nil? || Params.scalar?(of) || of == Hash || Params.params_class?(of)

        raise DefinitionError, "param :#{name}: unsupported item type #{of.inspect}"
      end

      def decode_field(field, given, path)
        here = "#{path}/#{Params.escape(field.name)}"
        present = given.key?(field.name)
        value = given[field.name]
        if !present || (value.nil? && !field.nullable)
          return field.default if field.has_default && value.nil?
          raise ArgumentError, "#{Params.pointer(path)}: missing required property \"#{field.name}\"" if field.required && !present
          return nil if value.nil? && (!field.required || field.nullable)

          raise ArgumentError, "#{here}: must not be null"
        end
        return nil if value.nil?

        decoded = Params.decode_value(field.type, field.of, value, here)
        if field.one_of && !field.one_of.include?(decoded)
          raise ArgumentError, "#{here}: #{JSON.generate(value)} is not one of #{JSON.generate(field.one_of)}"
        end
        decoded
      end
    end

    # The value of one parameter by name (String or Symbol).
    def [](name) = @values[name.to_s]

    # The parameter values as a Hash with String keys (nested objects as Hashes): the JSON
    # form of this instance.
    def to_h
      @values.transform_values { |v| Params.plain(v) }
    end

    # Instances are equal when their class and values are.
    def ==(other)
      other.class == self.class && other.to_h == to_h
    end
    alias eql? ==

    # Consistent with `==`.
    def hash = [self.class, to_h].hash

    # Shows the class and values.
    def inspect = "#<#{self.class.label} #{to_h.inspect}>"

    class << self
      # Whether `type` is a scalar parameter type.
      def scalar?(type)
        [String, Integer, Float, Boolean].include?(type)
      end

      # Whether `type` is a `Params` subclass.
      def params_class?(type)
        type.is_a?(Class) && type < Params
      end

      # A JSON pointer segment (`~` and `/` escaped).
      def escape(name) = name.gsub("~", "~0").gsub("/", "~1")

      # The pointer as the core writes it (`/` for the root).
      def pointer(path) = path.empty? ? "/" : path

      # The JSON type name of a value, for messages.
      def kind(value)
        case value
        when nil then "null"
        when true, false then "a boolean"
        when Integer then "an integer"
        when Float then "a number"
        when String then "a string"
        when Array then "an array"
        when Hash then "an object"
        else value.class.name
        end
      end

      # Decodes one value of `type` (items of `of` for an Array) at `path`.
      def decode_value(type, of, value, path)
        return type.decode(value, path) if params_class?(type)

        ok = case type.name
             when "String" then value.is_a?(String)
             when "Integer" then value.is_a?(Integer)
             when "Float" then value.is_a?(Numeric)
             when "PhaseoAgentSdk::Boolean" then [true, false].include?(value)
             when "Hash" then value.is_a?(Hash)
             else value.is_a?(Array)
             end
        raise ArgumentError, "#{pointer(path)}: expected #{expected(type)}, got #{kind(value)}" unless ok
        return value.to_f if type == Float
        return value.each_with_index.map { |item, i| decode_value(of, nil, item, "#{path}/#{i}") } if type == Array

        value
      end

      # A value made plain JSON (instances become Hashes).
      def plain(value)
        case value
        when Params then value.to_h
        when Array then value.map { |v| plain(v) }
        else value
        end
      end

      private

      def expected(type)
        { String => "a string", Integer => "an integer", Float => "a number", Boolean => "a boolean",
          Hash => "an object", Array => "an array" }.fetch(type)
      end
    end

    # Builds a class's JSON Schema; a class reachable from itself is written once under
    # `$defs` (the root class as `#`) and referenced by `$ref`.
    class Schema
      def initialize(root_class)
        @root = root_class
        @recursive = recursive_classes(root_class)
        @defs = {}
      end

      # The schema of the root class.
      def root
        schema = object_schema(@root)
        @recursive.each { |c| @defs[c.label] = object_schema(c) unless c == @root }
        schema["$defs"] = @defs unless @defs.empty?
        schema
      end

      private

      def recursive_classes(start)
        found = []
        walk = lambda do |klass, stack|
          return found << klass if stack.include?(klass) && !found.include?(klass)
          return if stack.include?(klass)

          klass.fields.each do |f|
            [f.type, f.of].select { |t| Params.params_class?(t) }.each { |t| walk.call(t, stack + [klass]) }
          end
        end
        walk.call(start, [])
        found.each do |klass|
          next if klass == start || klass.name

          raise DefinitionError, "a recursive parameter type must be a named Params class"
        end
        found
      end

      def object_schema(klass)
        schema = { "type" => "object" }
        schema["description"] = klass.description if klass.description
        schema["properties"] = klass.fields.to_h { |f| [f.name, field_schema(f)] }
        required = klass.fields.select(&:required).map(&:name)
        schema["required"] = required unless required.empty?
        schema
      end

      def field_schema(field)
        schema = type_schema(field.type, field.of)
        if field.nullable
          schema = schema.key?("type") ? schema.merge("type" => [schema["type"], "null"]) : { "anyOf" => [schema, { "type" => "null" }] }
        end
        schema["description"] = field.description if field.description
        schema["enum"] = field.one_of if field.one_of
        schema["default"] = field.default if field.has_default
        schema
      end

      def type_schema(type, of)
        if Params.params_class?(type)
          return { "$ref" => "#" } if type == @root && @recursive.include?(type)
          return { "$ref" => "#/$defs/#{type.label}" } if @recursive.include?(type)

          return object_schema(type)
        end
        { String => { "type" => "string" }, Integer => { "type" => "integer" },
          Float => { "type" => "number" }, Boolean => { "type" => "boolean" },
          Hash => { "type" => "object" } }.fetch(type) { { "type" => "array", "items" => type_schema(of, nil) } }
      end
    end
  end
end
