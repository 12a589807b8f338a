using System;
using System.Collections;
using System.Collections.Generic;
using System.ComponentModel;
using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Linq;
using System.Reflection;

namespace PhaseoAgentSdk
{
    /// <summary>The JSON name of a property, field or enum member of a tool's input or output type
    /// (default: its C# name as written).</summary>
    [AttributeUsage(AttributeTargets.Property | AttributeTargets.Field)]
    public sealed class JsonNameAttribute : Attribute
    {
        /// <summary>The name in JSON.</summary>
        public string Name { get; }

        /// <summary>Names the member <paramref name="name"/> in JSON.</summary>
        public JsonNameAttribute(string name) { Name = name; }
    }

    /// <summary>
    /// JSON Schemas generated from .NET types, and JSON values decoded into them
    /// (docs/behaviour.md §20). A class (or struct) is an object of its public instance
    /// properties with a setter and its public fields; <c>[Description]</c>
    /// (System.ComponentModel) on the type or a member is its description,
    /// <c>[Required]</c> (System.ComponentModel.DataAnnotations) makes a member required,
    /// <c>[DefaultValue]</c> gives its default (used when the value is left out) and
    /// <see cref="JsonNameAttribute"/> its JSON name. <c>string</c>, <c>bool</c>, the integer
    /// types, <c>float</c>/<c>double</c>/<c>decimal</c>, enums (their names), <c>T?</c>
    /// (nullable), arrays and lists (<c>T[]</c>, <c>List&lt;T&gt;</c>, <c>IList&lt;T&gt;</c>,
    /// <c>IReadOnlyList&lt;T&gt;</c>, <c>IEnumerable&lt;T&gt;</c>), string-keyed dictionaries
    /// and <c>object</c> (any value) are supported. A type that contains itself is written
    /// once and referenced with <c>$ref</c> (the root as <c>#</c>, others under
    /// <c>$defs</c>).
    /// </summary>
    public static class ToolSchema
    {
        /// <summary>The JSON Schema of <typeparamref name="T"/>; throws
        /// <see cref="AgentException"/> (<c>definition_invalid</c>) naming a member whose type
        /// has no JSON form.</summary>
        public static Dictionary<string, object> For<T>() => For(typeof(T));

        /// <summary>The JSON Schema of <paramref name="type"/> (see <see cref="For{T}"/>).</summary>
        public static Dictionary<string, object> For(Type type)
        {
            if (type == null) throw new ArgumentNullException(nameof(type));
            return new SchemaWriter(type).Root();
        }

        /// <summary>The strict form of a schema, made by the core (docs/behaviour.md §12): every
        /// object closed, every property required, optional ones nullable.</summary>
        public static Dictionary<string, object> Strict(Dictionary<string, object> schema)
        {
            if (schema == null) throw new ArgumentNullException(nameof(schema));
            Native.Check(Native.phaseo_schema_strict(Native.Utf8(Json.Write(schema)), out var text, out var err), err);
            return (Dictionary<string, object>)Json.Parse(Native.Take(text));
        }

        /// <summary>Decodes a JSON value (plain data as <see cref="Json.Parse"/> gives, or
        /// anything <see cref="Json.Write"/> accepts) into <typeparamref name="T"/>; throws
        /// <see cref="ArgumentException"/> with the message <c>&lt;JSON pointer&gt;: &lt;reason&gt;</c>
        /// (<c>/</c> for the root) when the value does not fit.</summary>
        public static T Decode<T>(object value) => (T)Decode(typeof(T), value);

        /// <summary>Decodes a JSON value into <paramref name="type"/> (see
        /// <see cref="Decode{T}"/>).</summary>
        public static object Decode(Type type, object value)
        {
            if (type == null) throw new ArgumentNullException(nameof(type));
            if (!(value == null || value is Dictionary<string, object> || value is List<object> || value is string
                  || value is bool || value is long || value is ulong || value is double))
                value = Json.Parse(Json.Write(value));
            return Decoder.Value(type, value, "");
        }

        /// <summary>A value of a declared type as plain JSON data (JSON names, enums as their
        /// names, members that are null left out).</summary>
        public static object Encode(object value)
        {
            if (value == null) return null;
            var type = value.GetType();
            if (value is string || value is bool || type.IsPrimitive || value is decimal) return value;
            if (type.IsEnum)
            {
                foreach (var e in EnumNames(type)) if (Equals(e.Value, value)) return e.Key;
                return value.ToString();
            }
            if (value is IDictionary dict)
            {
                var m = new Dictionary<string, object>();
                foreach (DictionaryEntry e in dict) m[Convert.ToString(e.Key, CultureInfo.InvariantCulture)] = Encode(e.Value);
                return m;
            }
            if (value is IEnumerable items)
            {
                var list = new List<object>();
                foreach (var item in items) list.Add(Encode(item));
                return list;
            }
            if (Members.IsObject(type))
            {
                var m = new Dictionary<string, object>();
                foreach (var member in Members.Of(type))
                {
                    var v = member.Get(value);
                    if (v != null) m[member.JsonName] = Encode(v);
                }
                return m;
            }
            return value;
        }

        /// <summary>The element type of a list type, or null when <paramref name="type"/> is
        /// not one.</summary>
        internal static Type ItemType(Type type)
        {
            if (type == typeof(string)) return null;
            if (type.IsArray) return type.GetElementType();
            if (!type.IsGenericType) return null;
            var def = type.GetGenericTypeDefinition();
            if (def == typeof(List<>) || def == typeof(IList<>) || def == typeof(IReadOnlyList<>)
                || def == typeof(IEnumerable<>) || def == typeof(ICollection<>) || def == typeof(IReadOnlyCollection<>))
                return type.GetGenericArguments()[0];
            return null;
        }

        /// <summary>The value type of a string-keyed dictionary type, or null.</summary>
        internal static Type MapValueType(Type type)
        {
            if (!type.IsGenericType) return null;
            var def = type.GetGenericTypeDefinition();
            if ((def == typeof(Dictionary<,>) || def == typeof(IDictionary<,>) || def == typeof(IReadOnlyDictionary<,>))
                && type.GetGenericArguments()[0] == typeof(string))
                return type.GetGenericArguments()[1];
            return null;
        }

        /// <summary>An enum's members by JSON name (<see cref="JsonNameAttribute"/> or the C#
        /// name), in declaration order.</summary>
        internal static List<KeyValuePair<string, object>> EnumNames(Type type)
        {
            var names = new List<KeyValuePair<string, object>>();
            foreach (var f in type.GetFields(BindingFlags.Public | BindingFlags.Static))
            {
                var name = f.GetCustomAttribute<JsonNameAttribute>();
                names.Add(new KeyValuePair<string, object>(name != null ? name.Name : f.Name, f.GetValue(null)));
            }
            return names;
        }

        internal static bool IsInteger(Type t) =>
            t == typeof(int) || t == typeof(long) || t == typeof(short) || t == typeof(byte) || t == typeof(sbyte)
            || t == typeof(uint) || t == typeof(ulong) || t == typeof(ushort);

        internal static bool IsNumber(Type t) => t == typeof(double) || t == typeof(float) || t == typeof(decimal);
    }

    /// <summary>One public property or field of an object type, as the schema and decoder
    /// see it.</summary>
    sealed class Member
    {
        internal string JsonName;
        internal Type Type;
        internal bool Required;
        internal string Description;
        internal bool HasDefault;
        internal object Default;
        internal Func<object, object> Get;
        internal Action<object, object> Set;
    }

    /// <summary>Reads a type's members (cached).</summary>
    static class Members
    {
        static readonly System.Collections.Concurrent.ConcurrentDictionary<Type, List<Member>> cache =
            new System.Collections.Concurrent.ConcurrentDictionary<Type, List<Member>>();

        // A type of the framework (DateTime, Guid, Uri, ...) is not read as an object of its
        // properties: its JSON form is not its properties.
        internal static bool IsObject(Type t) =>
            !IsFramework(t) && (t.IsClass || (t.IsValueType && !t.IsPrimitive && !t.IsEnum)) && t != typeof(string) && t != typeof(object)
            && t != typeof(decimal) && Nullable.GetUnderlyingType(t) == null && ToolSchema.ItemType(t) == null
            && ToolSchema.MapValueType(t) == null && !typeof(Delegate).IsAssignableFrom(t);

        internal static List<Member> Of(Type type) => cache.GetOrAdd(type, Read);

        static bool IsFramework(Type t)
        {
            var ns = t.Namespace ?? "";
            return ns == "System" || ns.StartsWith("System.", StringComparison.Ordinal)
                || ns == "Microsoft" || ns.StartsWith("Microsoft.", StringComparison.Ordinal);
        }

        static List<Member> Read(Type type)
        {
            var list = new List<Member>();
            foreach (var p in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
            {
                if (p.GetIndexParameters().Length > 0 || p.GetGetMethod() == null || p.GetSetMethod() == null) continue;
                var prop = p;
                list.Add(Describe(p, p.PropertyType, o => prop.GetValue(o), (o, v) => prop.SetValue(o, v)));
            }
            foreach (var f in type.GetFields(BindingFlags.Public | BindingFlags.Instance))
            {
                if (f.IsInitOnly) continue;
                var field = f;
                list.Add(Describe(f, f.FieldType, o => field.GetValue(o), (o, v) => field.SetValue(o, v)));
            }
            return list;
        }

        static Member Describe(MemberInfo info, Type type, Func<object, object> get, Action<object, object> set)
        {
            var name = info.GetCustomAttribute<JsonNameAttribute>();
            var defaultValue = info.GetCustomAttribute<DefaultValueAttribute>();
            return new Member
            {
                JsonName = name != null ? name.Name : info.Name,
                Type = type,
                Required = info.GetCustomAttribute<RequiredAttribute>() != null,
                Description = info.GetCustomAttribute<DescriptionAttribute>()?.Description,
                HasDefault = defaultValue != null,
                Default = defaultValue?.Value,
                Get = get,
                Set = set,
            };
        }
    }

    /// <summary>Writes one type's schema; a type met again while inside itself becomes a
    /// <c>$ref</c>.</summary>
    sealed class SchemaWriter
    {
        readonly Type root;
        readonly HashSet<Type> recursive = new HashSet<Type>();
        readonly Dictionary<string, object> defs = new Dictionary<string, object>();

        internal SchemaWriter(Type root)
        {
            this.root = root;
            FindRecursive(root, new List<Type>(), "");
        }

        internal Dictionary<string, object> Root()
        {
            if (!Members.IsObject(root))
                throw new AgentException(ErrorCodes.DefinitionInvalid,
                    "A tool's input type must be a class or struct with properties, got " + root.Name);
            var schema = Object(root);
            foreach (var t in recursive)
                if (t != root) defs[t.Name] = Object(t);
            if (defs.Count > 0) schema["$defs"] = defs;
            return schema;
        }

        void FindRecursive(Type type, List<Type> stack, string path)
        {
            type = Unwrap(type);
            if (!Members.IsObject(type)) return;
            if (stack.Contains(type)) { recursive.Add(type); return; }
            stack.Add(type);
            foreach (var m in Members.Of(type)) FindRecursive(m.Type, stack, path + "." + m.JsonName);
            stack.RemoveAt(stack.Count - 1);
        }

        static Type Unwrap(Type type)
        {
            while (true)
            {
                var inner = Nullable.GetUnderlyingType(type) ?? ToolSchema.ItemType(type) ?? ToolSchema.MapValueType(type);
                if (inner == null) return type;
                type = inner;
            }
        }

        Dictionary<string, object> Object(Type type)
        {
            var schema = new Dictionary<string, object> { { "type", "object" } };
            var description = type.GetCustomAttribute<DescriptionAttribute>()?.Description;
            if (description != null) schema["description"] = description;
            var properties = new Dictionary<string, object>();
            var required = new List<object>();
            foreach (var m in Members.Of(type))
            {
                if (properties.ContainsKey(m.JsonName))
                    throw new AgentException(ErrorCodes.DefinitionInvalid,
                        type.Name + ": two members have the JSON name \"" + m.JsonName + "\"");
                var s = Of(m.Type, type.Name + "." + m.JsonName);
                if (m.Description != null) s["description"] = m.Description;
                if (m.HasDefault) s["default"] = ToolSchema.Encode(m.Default);
                properties[m.JsonName] = s;
                if (m.Required) required.Add(m.JsonName);
            }
            schema["properties"] = properties;
            if (required.Count > 0) schema["required"] = required;
            return schema;
        }

        Dictionary<string, object> Of(Type type, string where)
        {
            var underlying = Nullable.GetUnderlyingType(type);
            if (underlying != null)
            {
                var inner = Of(underlying, where);
                if (inner.TryGetValue("type", out var t) && t is string name)
                {
                    inner["type"] = new List<object> { name, "null" };
                    if (inner.TryGetValue("enum", out var e)) ((List<object>)e).Add(null);
                    return inner;
                }
                return new Dictionary<string, object> { { "anyOf", new List<object> { inner, Type("null") } } };
            }
            if (type == typeof(string)) return Type("string");
            if (type == typeof(bool)) return Type("boolean");
            if (ToolSchema.IsInteger(type)) return Type("integer");
            if (ToolSchema.IsNumber(type)) return Type("number");
            if (type == typeof(object)) return new Dictionary<string, object>();
            if (type.IsEnum)
            {
                var s = Type("string");
                s["enum"] = ToolSchema.EnumNames(type).Select(e => (object)e.Key).ToList();
                return s;
            }
            var item = ToolSchema.ItemType(type);
            if (item != null)
            {
                var s = Type("array");
                s["items"] = Of(item, where + "[]");
                return s;
            }
            var value = ToolSchema.MapValueType(type);
            if (value != null)
            {
                var s = Type("object");
                s["additionalProperties"] = Of(value, where + "{}");
                return s;
            }
            if (Members.IsObject(type) && !type.IsAbstract && !type.IsInterface)
            {
                if (recursive.Contains(type))
                    return new Dictionary<string, object> { { "$ref", type == root ? "#" : "#/$defs/" + type.Name } };
                return Object(type);
            }
            throw new AgentException(ErrorCodes.DefinitionInvalid,
                where + ": the type " + type.Name + " has no JSON Schema form (use string, bool, a number, an enum, "
                + "a list, a string-keyed dictionary, object or a class with properties)");
        }

        static Dictionary<string, object> Type(string name) => new Dictionary<string, object> { { "type", name } };
    }

    /// <summary>Decodes plain JSON data into declared types, naming the JSON pointer of the
    /// first value that does not fit.</summary>
    static class Decoder
    {
        internal static object Value(Type type, object value, string path)
        {
            var underlying = Nullable.GetUnderlyingType(type);
            if (value == null)
            {
                if (underlying != null || !type.IsValueType) return null;
                throw Fail(path, "expected " + Expected(type) + ", got null");
            }
            if (underlying != null) return Value(underlying, value, path);
            if (type == typeof(object)) return value;
            if (type == typeof(string))
                return value as string ?? throw Fail(path, "expected a string, got " + Kind(value));
            if (type == typeof(bool))
                return value is bool ? value : throw Fail(path, "expected a boolean, got " + Kind(value));
            if (ToolSchema.IsInteger(type)) return Integer(type, value, path);
            if (ToolSchema.IsNumber(type))
            {
                if (!(value is long || value is ulong || value is double))
                    throw Fail(path, "expected a number, got " + Kind(value));
                return Convert.ChangeType(value, type, CultureInfo.InvariantCulture);
            }
            if (type.IsEnum)
            {
                var names = ToolSchema.EnumNames(type);
                foreach (var e in names) if (value is string name && name == e.Key) return e.Value;
                throw Fail(path, Json.Write(value) + " is not one of " + Json.Write(names.Select(e => e.Key)));
            }
            var item = ToolSchema.ItemType(type);
            if (item != null) return List(type, item, value, path);
            var mapValue = ToolSchema.MapValueType(type);
            if (mapValue != null)
            {
                if (!(value is Dictionary<string, object> source)) throw Fail(path, "expected an object, got " + Kind(value));
                var dict = (IDictionary)Activator.CreateInstance(typeof(Dictionary<,>).MakeGenericType(typeof(string), mapValue));
                foreach (var e in source) dict[e.Key] = Value(mapValue, e.Value, path + "/" + Escape(e.Key));
                return dict;
            }
            return Object(type, value, path);
        }

        static object Object(Type type, object value, string path)
        {
            if (!(value is Dictionary<string, object> fields)) throw Fail(path, "expected an object, got " + Kind(value));
            object target;
            try { target = Activator.CreateInstance(type); }
            catch (MissingMethodException)
            {
                throw new AgentException(ErrorCodes.DefinitionInvalid, type.Name + " needs a public parameterless constructor to be decoded");
            }
            foreach (var m in Members.Of(type))
            {
                if (!fields.TryGetValue(m.JsonName, out var v) || (v == null && m.HasDefault && !AdmitsNull(m.Type)))
                {
                    if (m.Required && !fields.ContainsKey(m.JsonName))
                        throw Fail(path, "missing required property \"" + m.JsonName + "\"");
                    if (m.HasDefault) m.Set(target, Value(m.Type, ToolSchema.Encode(m.Default), path + "/" + Escape(m.JsonName)));
                    continue;
                }
                m.Set(target, Value(m.Type, v, path + "/" + Escape(m.JsonName)));
            }
            return target;
        }

        static bool AdmitsNull(Type t) => !t.IsValueType || Nullable.GetUnderlyingType(t) != null;

        static object List(Type type, Type item, object value, string path)
        {
            if (!(value is List<object> source)) throw Fail(path, "expected an array, got " + Kind(value));
            var array = Array.CreateInstance(item, source.Count);
            for (int i = 0; i < source.Count; i++) array.SetValue(Value(item, source[i], path + "/" + i), i);
            if (type.IsArray) return array;
            var list = (IList)Activator.CreateInstance(typeof(List<>).MakeGenericType(item));
            foreach (var x in array) list.Add(x);
            return list;
        }

        static object Integer(Type type, object value, string path)
        {
            if (value is double d && d == Math.Floor(d) && !double.IsInfinity(d)) value = (decimal)d;
            if (!(value is long || value is ulong || value is decimal))
                throw Fail(path, "expected an integer, got " + Kind(value));
            try { return Convert.ChangeType(value, type, CultureInfo.InvariantCulture); }
            catch (OverflowException) { throw Fail(path, Json.Write(value) + " is out of range for " + type.Name); }
        }

        static string Escape(string name) => name.Replace("~", "~0").Replace("/", "~1");

        static ArgumentException Fail(string path, string reason) =>
            new ArgumentException((path.Length == 0 ? "/" : path) + ": " + reason);

        static string Expected(Type t) =>
            t == typeof(bool) ? "a boolean" : ToolSchema.IsInteger(t) ? "an integer" : ToolSchema.IsNumber(t) ? "a number"
            : t.IsEnum ? "one of " + Json.Write(ToolSchema.EnumNames(t).Select(e => e.Key)) : "an object";

        static string Kind(object v) =>
            v == null ? "null" : v is bool ? "a boolean" : v is string ? "a string" : v is List<object> ? "an array"
            : v is Dictionary<string, object> ? "an object" : v is double ? "a number" : "an integer";
    }
}
