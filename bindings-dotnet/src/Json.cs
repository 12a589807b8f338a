using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace PhaseoAgentSdk
{
    /// <summary>
    /// The JSON codec of the binding. Values are plain .NET data: objects are
    /// <c>Dictionary&lt;string, object&gt;</c> (keys in the order the text wrote them: the
    /// codec only ever adds keys, and both Mono's and .NET's dictionaries enumerate a
    /// dictionary that never had a removal in insertion order), arrays are
    /// <c>List&lt;object&gt;</c>, strings, <c>bool</c>, <c>null</c>, and numbers as
    /// <c>long</c> (integers that fit), <c>ulong</c> (larger unsigned integers) or
    /// <c>double</c>. No System.Text.Json: Mono 6.8 has none and the binding needs no NuGet.
    /// </summary>
    public static class Json
    {
        /// <summary>Nesting beyond this is refused while writing (a cycle, or far past the
        /// SDK's 64-level value limit, which the core checks with its own message).</summary>
        const int MaxWriteDepth = 200;

        /// <summary>Parses JSON text into plain values; throws <see cref="FormatException"/>
        /// on malformed text.</summary>
        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException(nameof(text));
            var r = new Reader(text);
            r.SkipWs();
            var v = r.Value(0);
            r.SkipWs();
            if (r.Pos != text.Length) throw r.Error("unexpected text after the value");
            return v;
        }

        /// <summary>Writes a value as compact JSON text. Accepts dictionaries with string
        /// keys, any non-string <see cref="IEnumerable"/>, strings, chars, booleans, every
        /// numeric type, <see cref="RawJson"/> and null; anything else (or NaN, infinities,
        /// a cycle) throws <see cref="ArgumentException"/> naming the problem.</summary>
        public static string Write(object value)
        {
            var sb = new StringBuilder();
            WriteValue(sb, value, 0);
            return sb.ToString();
        }

        static void WriteValue(StringBuilder sb, object v, int depth)
        {
            if (depth > MaxWriteDepth)
                throw new ArgumentException("value nested more than " + MaxWriteDepth + " levels deep (a cycle?)");
            if (v == null) { sb.Append("null"); return; }
            if (v is string s) { WriteString(sb, s); return; }
            if (v is bool b) { sb.Append(b ? "true" : "false"); return; }
            if (v is char c) { WriteString(sb, c.ToString()); return; }
            if (v is RawJson raw) { sb.Append(raw.Text); return; }
            if (v is int || v is long || v is short || v is sbyte || v is byte || v is ushort || v is uint || v is ulong)
            {
                sb.Append(Convert.ToString(v, CultureInfo.InvariantCulture));
                return;
            }
            if (v is decimal m) { sb.Append(m.ToString(CultureInfo.InvariantCulture)); return; }
            if (v is double d) { WriteDouble(sb, d); return; }
            if (v is float f) { WriteDouble(sb, f); return; }
            if (v is IDictionary dict)
            {
                sb.Append('{');
                bool first = true;
                foreach (DictionaryEntry e in dict)
                {
                    var key = e.Key as string;
                    if (key == null)
                        throw new ArgumentException("a dictionary key is not a string: " + e.Key?.GetType().Name);
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, key);
                    sb.Append(':');
                    WriteValue(sb, e.Value, depth + 1);
                }
                sb.Append('}');
                return;
            }
            if (v is IEnumerable list)
            {
                sb.Append('[');
                bool firstItem = true;
                foreach (var item in list)
                {
                    if (!firstItem) sb.Append(',');
                    firstItem = false;
                    WriteValue(sb, item, depth + 1);
                }
                sb.Append(']');
                return;
            }
            throw new ArgumentException("a value of type " + v.GetType().FullName + " has no JSON form");
        }

        static void WriteDouble(StringBuilder sb, double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d))
                throw new ArgumentException("the number " + d.ToString(CultureInfo.InvariantCulture) + " has no JSON form");
            if (d == Math.Floor(d) && Math.Abs(d) < 1e15) sb.Append(((long)d).ToString(CultureInfo.InvariantCulture));
            else sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
        }

        static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (var c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        sealed class Reader
        {
            readonly string t;
            public int Pos;
            public Reader(string text) { t = text; }

            public FormatException Error(string what) => new FormatException("invalid JSON at offset " + Pos + ": " + what);

            public void SkipWs()
            {
                while (Pos < t.Length && (t[Pos] == ' ' || t[Pos] == '\n' || t[Pos] == '\r' || t[Pos] == '\t')) Pos++;
            }

            public object Value(int depth)
            {
                if (depth > 10000) throw Error("nested too deeply");
                if (Pos >= t.Length) throw Error("unexpected end");
                char c = t[Pos];
                switch (c)
                {
                    case '{':
                        {
                            Pos++;
                            var d = new Dictionary<string, object>();
                            SkipWs();
                            if (Pos < t.Length && t[Pos] == '}') { Pos++; return d; }
                            while (true)
                            {
                                SkipWs();
                                if (Pos >= t.Length || t[Pos] != '"') throw Error("expected a key");
                                var key = Str();
                                SkipWs();
                                if (Pos >= t.Length || t[Pos] != ':') throw Error("expected ':'");
                                Pos++;
                                SkipWs();
                                d[key] = Value(depth + 1);
                                SkipWs();
                                if (Pos < t.Length && t[Pos] == ',') { Pos++; continue; }
                                if (Pos < t.Length && t[Pos] == '}') { Pos++; return d; }
                                throw Error("expected ',' or '}'");
                            }
                        }
                    case '[':
                        {
                            Pos++;
                            var l = new List<object>();
                            SkipWs();
                            if (Pos < t.Length && t[Pos] == ']') { Pos++; return l; }
                            while (true)
                            {
                                SkipWs();
                                l.Add(Value(depth + 1));
                                SkipWs();
                                if (Pos < t.Length && t[Pos] == ',') { Pos++; continue; }
                                if (Pos < t.Length && t[Pos] == ']') { Pos++; return l; }
                                throw Error("expected ',' or ']'");
                            }
                        }
                    case '"': return Str();
                    case 't': Lit("true"); return true;
                    case 'f': Lit("false"); return false;
                    case 'n': Lit("null"); return null;
                    default: return Num();
                }
            }

            void Lit(string w)
            {
                if (string.CompareOrdinal(t, Pos, w, 0, w.Length) != 0) throw Error("unexpected character");
                Pos += w.Length;
            }

            string Str()
            {
                Pos++;
                var sb = new StringBuilder();
                while (true)
                {
                    if (Pos >= t.Length) throw Error("unterminated string");
                    char c = t[Pos++];
                    if (c == '"') return sb.ToString();
                    if (c != '\\') { sb.Append(c); continue; }
                    if (Pos >= t.Length) throw Error("unterminated string");
                    char e = t[Pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (Pos + 4 > t.Length) throw Error("bad \\u escape");
                            sb.Append((char)int.Parse(t.Substring(Pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                            Pos += 4;
                            break;
                        default: throw Error("bad escape");
                    }
                }
            }

            object Num()
            {
                int start = Pos;
                bool integral = true;
                if (Pos < t.Length && t[Pos] == '-') Pos++;
                while (Pos < t.Length)
                {
                    char c = t[Pos];
                    if (c >= '0' && c <= '9') { Pos++; continue; }
                    if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { integral = false; Pos++; continue; }
                    break;
                }
                var s = t.Substring(start, Pos - start);
                if (s.Length == 0 || s == "-") throw Error("unexpected character");
                if (integral)
                {
                    if (long.TryParse(s, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var l)) return l;
                    if (ulong.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out var u)) return u;
                }
                if (double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture, out var d)) return d;
                throw Error("bad number " + s);
            }
        }
    }

    /// <summary>JSON text written verbatim where a value is expected (e.g. a result the
    /// application already holds as text). The text is checked by the core.</summary>
    public sealed class RawJson
    {
        /// <summary>The JSON text.</summary>
        public string Text { get; }
        /// <summary>Wraps JSON text.</summary>
        public RawJson(string text) { Text = text ?? "null"; }
        /// <inheritdoc/>
        public override string ToString() => Text;
    }
}
