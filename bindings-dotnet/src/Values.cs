using System;
using System.Collections.Generic;

namespace PhaseoAgentSdk
{
    /// <summary>Reads fields of decoded JSON objects.</summary>
    internal static class V
    {
        internal static Dictionary<string, object> Obj(object v) => v as Dictionary<string, object>;
        internal static List<object> List(object v) => v as List<object> ?? new List<object>();
        internal static object Get(Dictionary<string, object> m, string k) =>
            m != null && m.TryGetValue(k, out var v) ? v : null;
        internal static string Str(Dictionary<string, object> m, string k) => Get(m, k) as string;
        internal static long Long(Dictionary<string, object> m, string k) => Long(Get(m, k));
        internal static long Long(object v)
        {
            if (v is long l) return l;
            if (v is double d) return (long)d;
            if (v is ulong u) return (long)u;
            return 0;
        }
        internal static double Double(Dictionary<string, object> m, string k)
        {
            var v = Get(m, k);
            if (v is long l) return l;
            if (v is double d) return d;
            if (v is ulong u) return u;
            return 0;
        }
        internal static double? NDouble(Dictionary<string, object> m, string k) => Get(m, k) == null ? (double?)null : Double(m, k);
        internal static bool Bool(Dictionary<string, object> m, string k) => Get(m, k) is bool b && b;
    }
}
