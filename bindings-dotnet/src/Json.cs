using System;
using System.Collections;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

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
        /// <summary>The SDK's value limit (docs/behaviour.md §7): a value nested deeper is
        /// refused. The core checks it exactly where a value enters, with its own message.</summary>
        internal const int MaxValueDepth = 64;

        /// <summary>Nesting beyond this is refused while writing: a value's 64 levels under
        /// the few levels of the document that holds it (a state holds its values at most 8
        /// levels down, and a paused agent tool's state 4 levels down in the state that
        /// holds it, agents nesting at most 8 deep, as the core's state reader allows; it
        /// then checks each state from its own root).</summary>
        internal const int MaxWriteDepth = MaxValueDepth + 8 + 4 * 8;

        /// <summary>Text beyond this many characters is refused while writing (an endless
        /// enumeration would otherwise grow until the process runs out of memory).</summary>
        const int MaxWriteChars = 1 << 28;

        /// <summary>A call's arguments <c>[value, runtime]</c> (see <see cref="CallRuntime"/>):
        /// the value parsed as by <see cref="Parse"/>; the runtime is read into fields when a
        /// tool first looks at its <see cref="RuntimeContext"/> (most never do: the runtime is
        /// most of the text), the call's copy of the input only when read.</summary>
        internal static List<object> ParseCallArgs(string text, out CallRuntime runtime)
        {
            if (text == null) throw new ArgumentNullException(nameof(text));
            var r = new Reader(text);
            r.SkipWs();
            r.Expect('[');
            r.SkipWs();
            var value = r.Value(0);
            r.SkipWs();
            r.Expect(',');
            r.SkipWs();
            runtime = new CallRuntime(text, r.Pos);
            return new List<object> { value, null };
        }

        /// <summary>Reads the runtime of a call's arguments text (<see cref="ParseCallArgs"/>),
        /// which begins at <paramref name="start"/>, into <paramref name="into"/>; throws
        /// <see cref="FormatException"/> on malformed text.</summary>
        internal static void ReadCallRuntime(string text, int start, CallRuntime into)
        {
            var r = new Reader(text) { Pos = start };
            r.Runtime(into);
            r.SkipWs();
            r.Expect(']');
            r.SkipWs();
            if (r.Pos != text.Length) throw r.Error("unexpected text after the value");
        }

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

        /// <summary>The value at <paramref name="path"/> (object keys, from the top) of a
        /// document known to be well formed (a state the core wrote), read without building
        /// the rest of it; <paramref name="found"/> is false when a key is missing or a value
        /// on the path is not an object.</summary>
        internal static object Find(string text, out bool found, params string[] path)
        {
            var r = new Reader(text);
            found = false;
            foreach (var key in path)
            {
                r.SkipWs();
                if (!r.Member(key)) return null;
            }
            found = true;
            r.SkipWs();
            return r.Value(0);
        }

        /// <summary>Writes a value as compact JSON text. Strings, chars, booleans, every
        /// numeric type and null are JSON scalars; <see cref="RawJson"/> is written verbatim.
        /// Dictionaries with string keys (<see cref="IDictionary"/>, or any
        /// <c>IDictionary&lt;string, T&gt;</c> / <c>IReadOnlyDictionary&lt;string, T&gt;</c>)
        /// are objects, in their enumeration order; any other non-string
        /// <see cref="IEnumerable"/> is an array. An enum is written as its name, a string
        /// (<c>ToString()</c>: a combination of flags reads <c>"A, B"</c>, a value without a
        /// name its number, as a string). <see cref="DateTime"/> and
        /// <see cref="DateTimeOffset"/> are ISO 8601 strings (round-trip format "o"),
        /// <see cref="TimeSpan"/> its constant format ("c"), <see cref="Guid"/>,
        /// <see cref="Uri"/> and <see cref="Version"/> strings; System.Text.Json's
        /// <c>JsonElement</c>, <c>JsonDocument</c> and <c>JsonNode</c> their own JSON text.
        /// Any other object (a class, a record, a struct, an anonymous type) is an object of
        /// its public instance properties that have a public getter (the type's own first,
        /// then its base types', each in declaration order), then its public instance fields,
        /// under their C# names as written. Delegates, reflection objects (<c>Type</c>,
        /// <c>MethodInfo</c>, …), tasks, pointers and handles have no JSON form.
        /// Throws <see cref="ArgumentException"/> naming the problem and where it is (<c>$</c>
        /// is the value itself) for a value without JSON form, NaN or an infinity, a
        /// dictionary key that is not a string, a cycle (an object inside itself), nesting
        /// far past the SDK's 64 levels (docs/behaviour.md §7; values nested 65 to 104 levels
        /// deep are written, and refused by the SDK where they enter), and a getter or
        /// enumeration that throws ("value cannot be read: …").</summary>
        public static string Write(object value)
        {
            // The commonest answers of a tool, written without a writer's buffers.
            if (value == null) return "null";
            if (value is long l) return l.ToString(CultureInfo.InvariantCulture);
            if (value is int i) return i.ToString(CultureInfo.InvariantCulture);
            if (value is bool b) return b ? "true" : "false";
            var w = new Writer();
            w.Value(value, 0);
            return w.Text();
        }

        /// <summary>How values of one type are written (decided once per type).</summary>
        sealed class Shape
        {
            internal int Kind;
            internal string[] Names;
            internal MemberInfo[] Members;
            internal PropertyInfo Key, Val;   // KindPairs: KeyValuePair<string, T>
            internal MethodInfo Raw;          // KindRaw: the method giving the JSON text
            internal PropertyInfo RawRoot;    // KindRaw for JsonDocument: RootElement first
        }

        const int KindObject = 0, KindList = 1, KindPairs = 2, KindRaw = 3, KindRefused = 4;

        static readonly ConcurrentDictionary<Type, Shape> shapes = new ConcurrentDictionary<Type, Shape>();

        static Shape ShapeOf(Type t) => shapes.GetOrAdd(t, Describe);

        static Shape Describe(Type t)
        {
            if (typeof(Delegate).IsAssignableFrom(t) || typeof(MemberInfo).IsAssignableFrom(t) || typeof(Assembly).IsAssignableFrom(t)
                || typeof(Module).IsAssignableFrom(t) || typeof(ParameterInfo).IsAssignableFrom(t) || typeof(Task).IsAssignableFrom(t)
                || t == typeof(IntPtr) || t == typeof(UIntPtr) || t == typeof(Pointer) || t.IsPointer
                || typeof(SafeHandle).IsAssignableFrom(t) || typeof(WaitHandle).IsAssignableFrom(t))
                return new Shape { Kind = KindRefused };
            switch (t.FullName)
            {
                case "System.Text.Json.JsonElement":
                    return new Shape { Kind = KindRaw, Raw = t.GetMethod("GetRawText", Type.EmptyTypes) };
                case "System.Text.Json.JsonDocument":
                    {
                        var root = t.GetProperty("RootElement");
                        return new Shape { Kind = KindRaw, RawRoot = root, Raw = root?.PropertyType.GetMethod("GetRawText", Type.EmptyTypes) };
                    }
            }
            for (var b = t; b != null; b = b.BaseType)
                if (b.FullName == "System.Text.Json.Nodes.JsonNode")
                {
                    var m = t.GetMethods().FirstOrDefault(x => x.Name == "ToJsonString" && x.GetParameters().Length == 1);
                    if (m != null) return new Shape { Kind = KindRaw, Raw = m };
                }
            if (typeof(IEnumerable).IsAssignableFrom(t))
            {
                foreach (var i in t.GetInterfaces())
                {
                    if (!i.IsGenericType) continue;
                    var g = i.GetGenericTypeDefinition();
                    if ((g == typeof(IDictionary<,>) || g == typeof(IReadOnlyDictionary<,>)) && i.GetGenericArguments()[0] == typeof(string))
                    {
                        var pair = typeof(KeyValuePair<,>).MakeGenericType(i.GetGenericArguments());
                        return new Shape { Kind = KindPairs, Key = pair.GetProperty("Key"), Val = pair.GetProperty("Value") };
                    }
                }
                return new Shape { Kind = KindList };
            }
            // The type's own members first, then its base types' (as System.Text.Json orders
            // them); a member hidden by a derived one of the same name is left out.
            var names = new List<string>();
            var members = new List<MemberInfo>();
            var seen = new HashSet<string>();
            var chain = new List<Type>();
            for (var b = t; b != null && b != typeof(object) && b != typeof(ValueType); b = b.BaseType) chain.Add(b);
            const BindingFlags own = BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly;
            foreach (var b in chain)
                foreach (var p in b.GetProperties(own).OrderBy(x => x.MetadataToken))
                {
                    var get = p.GetGetMethod();
                    if (get == null || p.GetIndexParameters().Length > 0 || !seen.Add(p.Name)) continue;
                    names.Add(p.Name);
                    members.Add(p);
                }
            foreach (var b in chain)
                foreach (var f in b.GetFields(own).OrderBy(x => x.MetadataToken))
                {
                    if (!seen.Add(f.Name)) continue;
                    names.Add(f.Name);
                    members.Add(f);
                }
            return new Shape { Kind = KindObject, Names = names.ToArray(), Members = members.ToArray() };
        }

        /// <summary>One write: the text, and the containers on the way from the value to the
        /// current one (for cycles, and the place named in an error).</summary>
        sealed class Writer
        {
            readonly StringBuilder sb = new StringBuilder();
            readonly List<object> open = new List<object>();
            readonly List<object> where = new List<object>();

            internal string Text() => sb.ToString();

            string Place()
            {
                var p = new StringBuilder("$");
                foreach (var w in where)
                {
                    if (w is int i) p.Append('[').Append(i).Append(']');
                    else p.Append('.').Append((string)w);
                }
                return p.ToString();
            }

            ArgumentException Refuse(string what) => new ArgumentException(what + " (at " + Place() + ")");

            ArgumentException Unreadable(Exception e)
            {
                while (e is TargetInvocationException && e.InnerException != null) e = e.InnerException;
                while (e is AggregateException ae && ae.InnerExceptions.Count == 1) e = ae.InnerException;
                string m = null;
                try { m = e.Message; } catch (Exception) { }
                if (string.IsNullOrEmpty(m)) m = e.GetType().FullName;
                return Refuse("value cannot be read: " + m);
            }

            /// <summary>Enters a container at <paramref name="depth"/> (the containers around
            /// it): refuses a cycle and nesting past the limit.</summary>
            void Enter(object container, int depth)
            {
                foreach (var o in open)
                    if (ReferenceEquals(o, container)) throw Refuse("value contains a cycle");
                if (depth + 1 > MaxWriteDepth) throw new ArgumentException("value is nested more than " + MaxValueDepth + " levels deep");
                if (sb.Length > MaxWriteChars) throw new ArgumentException("value is too large (more than " + MaxWriteChars + " characters of JSON)");
                open.Add(container);
            }

            void Leave() => open.RemoveAt(open.Count - 1);

            internal void Value(object v, int depth)
            {
                if (v == null || v is DBNull) { sb.Append("null"); return; }
                if (v is string s) { WriteString(sb, s); return; }
                if (v is bool b) { sb.Append(b ? "true" : "false"); return; }
                if (v is char c) { WriteString(sb, c.ToString()); return; }
                if (v is RawJson raw) { sb.Append(raw.Text); return; }
                if (v is int || v is long || v is short || v is sbyte || v is byte || v is ushort || v is uint || v is ulong)
                {
                    sb.Append(Convert.ToString(v, CultureInfo.InvariantCulture));
                    return;
                }
                if (v is decimal m)
                {
                    // A whole decimal past 64 bits has no integer form the core reads: it is
                    // written as the 64-bit float it rounds to, as Java writes a BigDecimal.
                    if (m == decimal.Truncate(m) && (m < long.MinValue || m > ulong.MaxValue)) Double((double)m);
                    else sb.Append(m.ToString(CultureInfo.InvariantCulture));
                    return;
                }
                if (v is double d) { Double(d); return; }
                if (v is float f) { Double(f); return; }
                if (v is Enum) { WriteString(sb, v.ToString()); return; }
                if (v is DateTime dt) { WriteString(sb, dt.ToString("o", CultureInfo.InvariantCulture)); return; }
                if (v is DateTimeOffset dto) { WriteString(sb, dto.ToString("o", CultureInfo.InvariantCulture)); return; }
                if (v is TimeSpan ts) { WriteString(sb, ts.ToString("c", CultureInfo.InvariantCulture)); return; }
                if (v is Guid g) { WriteString(sb, g.ToString("D")); return; }
                if (v is Uri u) { WriteString(sb, u.OriginalString); return; }
                if (v is Version ver) { WriteString(sb, ver.ToString()); return; }
                if (v is IDictionary dict) { Dictionary(dict, depth); return; }
                var shape = ShapeOf(v.GetType());
                switch (shape.Kind)
                {
                    case KindRefused: throw Refuse("a value of type " + v.GetType().FullName + " has no JSON form");
                    case KindRaw:
                        {
                            object text;
                            try
                            {
                                var target = shape.RawRoot != null ? shape.RawRoot.GetValue(v) : v;
                                text = shape.Raw.Invoke(target, shape.Raw.GetParameters().Length == 1 ? new object[] { null } : null);
                            }
                            catch (Exception e) { throw Unreadable(e); }
                            sb.Append(text as string ?? "null");
                            return;
                        }
                    case KindPairs: Pairs((IEnumerable)v, shape, depth); return;
                    case KindList: List((IEnumerable)v, depth); return;
                    default: Object(v, shape, depth); return;
                }
            }

            void Double(double d)
            {
                if (double.IsNaN(d) || double.IsInfinity(d))
                    throw Refuse("the number " + d.ToString(CultureInfo.InvariantCulture) + " has no JSON form");
                if (d == Math.Floor(d) && Math.Abs(d) < 1e15) sb.Append(((long)d).ToString(CultureInfo.InvariantCulture));
                else sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
            }

            void Member(bool first, string name, object value, int depth)
            {
                if (!first) sb.Append(',');
                WriteString(sb, name);
                sb.Append(':');
                where.Add(name);
                Value(value, depth + 1);
                where.RemoveAt(where.Count - 1);
            }

            void Dictionary(IDictionary dict, int depth)
            {
                Enter(dict, depth);
                sb.Append('{');
                bool first = true;
                Each(dict, item =>
                {
                    var e = (DictionaryEntry)item;
                    if (!(e.Key is string key))
                        throw Refuse("a dictionary key is not a string: " + (e.Key?.GetType().Name ?? "null"));
                    Member(first, key, e.Value, depth);
                    first = false;
                }, dict.GetEnumerator);
                sb.Append('}');
                Leave();
            }

            void Pairs(IEnumerable pairs, Shape shape, int depth)
            {
                Enter(pairs, depth);
                sb.Append('{');
                bool first = true;
                Each(pairs, item =>
                {
                    string key;
                    object value;
                    try { key = (string)shape.Key.GetValue(item); value = shape.Val.GetValue(item); }
                    catch (Exception e) { throw Unreadable(e); }
                    if (key == null) throw Refuse("a dictionary key is null");
                    Member(first, key, value, depth);
                    first = false;
                }, pairs.GetEnumerator);
                sb.Append('}');
                Leave();
            }

            void List(IEnumerable list, int depth)
            {
                Enter(list, depth);
                sb.Append('[');
                int i = 0;
                Each(list, item =>
                {
                    if (i > 0) sb.Append(',');
                    where.Add(i);
                    Value(item, depth + 1);
                    where.RemoveAt(where.Count - 1);
                    i++;
                    if (sb.Length > MaxWriteChars) throw new ArgumentException("value is too large (more than " + MaxWriteChars + " characters of JSON)");
                }, list.GetEnumerator);
                sb.Append(']');
                Leave();
            }

            void Object(object v, Shape shape, int depth)
            {
                Enter(v, depth);
                sb.Append('{');
                for (int i = 0; i < shape.Members.Length; i++)
                {
                    object value;
                    try
                    {
                        value = shape.Members[i] is PropertyInfo p ? p.GetValue(v) : ((FieldInfo)shape.Members[i]).GetValue(v);
                    }
                    catch (Exception e)
                    {
                        where.Add(shape.Names[i]);
                        throw Unreadable(e);
                    }
                    Member(i == 0, shape.Names[i], value, depth);
                }
                sb.Append('}');
                Leave();
            }

            /// <summary>Enumerates, turning what the enumeration throws (not what writing an
            /// item throws) into "value cannot be read".</summary>
            void Each(IEnumerable source, Action<object> item, Func<IEnumerator> start)
            {
                IEnumerator e;
                try { e = start(); }
                catch (Exception x) { throw Unreadable(x); }
                try
                {
                    while (true)
                    {
                        object current;
                        try
                        {
                            if (!e.MoveNext()) break;
                            current = e.Current;
                        }
                        catch (Exception x) { throw Unreadable(x); }
                        item(current);
                    }
                }
                finally
                {
                    try { (e as IDisposable)?.Dispose(); }
                    catch (Exception) { /* the value was read; its disposal's failure changes nothing */ }
                }
            }
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

        static readonly char[] QuoteOrBackslash = { '"', '\\' };

        sealed class Reader
        {
            readonly string t;
            public int Pos;
            public Reader(string text) { t = text; }

            public FormatException Error(string what) => new FormatException("invalid JSON at offset " + Pos + ": " + what);

            // The scanning loops work on locals and store Pos once: Mono's JIT keeps neither
            // a field nor the text's length in a register, which made each character cost
            // several loads and a store.
            public void SkipWs()
            {
                string s = t;
                int p = Pos;
                while (p < s.Length)
                {
                    char c = s[p];
                    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
                    p++;
                }
                Pos = p;
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

            /// <summary>At an object: moves to the value of <paramref name="key"/> (true),
            /// passing over the members before it unread; false when it has no such key.</summary>
            public bool Member(string key)
            {
                if (Pos >= t.Length || t[Pos] != '{') return false;
                Pos++;
                while (true)
                {
                    SkipWs();
                    if (Pos >= t.Length || t[Pos] != '"') return false;
                    var name = Str();
                    SkipWs();
                    if (Pos >= t.Length || t[Pos] != ':') return false;
                    Pos++;
                    SkipWs();
                    if (name == key) return true;
                    Skip();
                    SkipWs();
                    if (Pos < t.Length && t[Pos] == ',') { Pos++; continue; }
                    return false;
                }
            }

            public void Expect(char c)
            {
                if (Pos >= t.Length || t[Pos] != c) throw Error("expected '" + c + "'");
                Pos++;
            }

            /// <summary>The runtime object of a call's arguments, read into fields; members
            /// the SDK does not read are passed over.</summary>
            public void Runtime(CallRuntime rt)
            {
                Members(key =>
                {
                    switch (key)
                    {
                        case "runId": rt.RunId = Value(1) as string; break;
                        case "agentId": rt.AgentId = Value(1) as string; break;
                        case "stepIndex": rt.StepIndex = Value(1); break;
                        case "context": rt.Context = Value(1); break;
                        case "attempt": rt.Attempt = Value(1); break;
                        case "idempotencyKey": rt.IdempotencyKey = Value(1) as string; break;
                        case "toolCall":
                            if (Pos < t.Length && t[Pos] == '{')
                            {
                                rt.HasCall = true;
                                Members(callKey =>
                                {
                                    switch (callKey)
                                    {
                                        case "id": rt.CallId = Value(1) as string; break;
                                        case "name": rt.CallName = Value(1) as string; break;
                                        case "input":
                                            {
                                                int start = Pos;
                                                Skip();
                                                rt.CallInput = t.Substring(start, Pos - start);
                                                break;
                                            }
                                        default: Value(1); break;
                                    }
                                });
                            }
                            else Value(1);
                            break;
                        default: Value(1); break;
                    }
                });
            }

            /// <summary>Reads an object, calling <paramref name="member"/> at each member's
            /// value (which it must read).</summary>
            void Members(Action<string> member)
            {
                Expect('{');
                SkipWs();
                if (Pos < t.Length && t[Pos] == '}') { Pos++; return; }
                while (true)
                {
                    SkipWs();
                    if (Pos >= t.Length || t[Pos] != '"') throw Error("expected a key");
                    var key = Str();
                    SkipWs();
                    Expect(':');
                    SkipWs();
                    member(key);
                    SkipWs();
                    if (Pos < t.Length && t[Pos] == ',') { Pos++; continue; }
                    if (Pos < t.Length && t[Pos] == '}') { Pos++; return; }
                    throw Error("expected ',' or '}'");
                }
            }

            /// <summary>Passes over one value without building it.</summary>
            void Skip()
            {
                string s = t;
                int p = Pos;
                if (p >= s.Length) return;
                char c = s[p];
                if (c == '"') { SkipString(); return; }
                if (c != '{' && c != '[')
                {
                    while (p < s.Length && ",}] \n\r\t".IndexOf(s[p]) < 0) p++;
                    Pos = p;
                    return;
                }
                int depth = 0;
                while (p < s.Length)
                {
                    c = s[p];
                    if (c == '"')
                    {
                        Pos = p;
                        SkipString();
                        p = Pos;
                        continue;
                    }
                    p++;
                    if (c == '{' || c == '[') depth++;
                    else if ((c == '}' || c == ']') && --depth == 0) break;
                }
                Pos = p;
            }

            void SkipString()
            {
                string s = t;
                int p = Pos + 1;
                while (true)
                {
                    int q = s.IndexOf('"', p);
                    if (q < 0) { Pos = s.Length + 1; return; }
                    // A quote after an odd number of backslashes is escaped.
                    int slashes = 0;
                    while (q - 1 - slashes >= p && s[q - 1 - slashes] == '\\') slashes++;
                    if ((slashes & 1) == 0) { Pos = q + 1; return; }
                    p = q + 1;
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
                // Most strings have no escape: one substring, no builder.
                int start = Pos, end = t.IndexOfAny(QuoteOrBackslash, start);
                if (end < 0) end = t.Length;
                if (end < t.Length && t[end] == '"')
                {
                    Pos = end + 1;
                    return t.Substring(start, end - start);
                }
                var sb = new StringBuilder(t, start, end - start, Math.Max(16, 2 * (end - start)));
                Pos = end;
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
                int digits = Pos - start - (t[start] == '-' ? 1 : 0);
                if (integral && digits > 0 && digits <= 18)
                {
                    // Fits a long whatever the digits: no substring, no culture-aware parse.
                    long n = 0;
                    for (int i = Pos - digits; i < Pos; i++) n = n * 10 + (t[i] - '0');
                    return t[start] == '-' ? -n : n;
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
