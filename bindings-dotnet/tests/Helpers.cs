using System;
using System.Collections.Generic;
using System.Linq;
using PhaseoAgentSdk;

namespace PhaseoAgentSdk.Tests
{
    /// <summary>Small builders for JSON data in tests.</summary>
    static class J
    {
        /// <summary>An object from key/value pairs, in order.</summary>
        public static Dictionary<string, object> O(params object[] kv)
        {
            var m = new Dictionary<string, object>();
            for (int i = 0; i < kv.Length; i += 2) m[(string)kv[i]] = kv[i + 1];
            return m;
        }

        /// <summary>A list.</summary>
        public static List<object> L(params object[] items) => items.ToList();

        /// <summary>A scripted response calling tools: (id, name, argumentsJson)…</summary>
        public static Dictionary<string, object> Calls(params string[] triples)
        {
            var calls = new List<object>();
            for (int i = 0; i < triples.Length; i += 3) calls.Add(O("id", triples[i], "name", triples[i + 1], "arguments", triples[i + 2]));
            return O("toolCalls", calls);
        }

        /// <summary>A scripted text response.</summary>
        public static Dictionary<string, object> Text(string text) => O("text", text);

        /// <summary>An object schema with string properties.</summary>
        public static Dictionary<string, object> Schema(params string[] props)
        {
            var p = new Dictionary<string, object>();
            foreach (var name in props) p[name] = O("type", "string");
            return O("type", "object", "properties", p);
        }
    }
}
