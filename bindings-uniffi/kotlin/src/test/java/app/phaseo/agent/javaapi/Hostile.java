package app.phaseo.agent.javaapi;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.time.DayOfWeek;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Date;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hostile host values of every sort from a seeded {@link Random}, and what the SDK must make
 * of each ({@link Expect}), worked out here on their own, not by the SDK's converter.
 */
final class Hostile {
    private Hostile() {}

    enum Priority { LOW, HIGH }

    record Line(String sku, int quantity) {}

    record Order(String id, Priority priority, double total, List<Line> lines, Object note) {}

    record Box(Object value) {}

    /** A record whose accessor throws. */
    record Broken(int x) {
        @Override
        public int x() {
            throw new IllegalStateException("accessor broke");
        }
    }

    /** An object of no JSON type (a bean: the SDK does not read getters). */
    static final class Bean {
        public int getFine() {
            return 1;
        }
    }

    /** An object whose {@code toString} throws: unreadable as a map key. */
    static final class BadKey {
        @Override
        public String toString() {
            throw new IllegalStateException("toString broke");
        }
    }

    /** A number whose text is whatever it is told to be (or throws). */
    static final class OddNumber extends Number {
        private final String text;

        OddNumber(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            if (text == null) {
                throw new IllegalStateException("number text broke");
            }
            return text;
        }

        @Override
        public int intValue() {
            return 0;
        }

        @Override
        public long longValue() {
            return 0;
        }

        @Override
        public float floatValue() {
            return 0;
        }

        @Override
        public double doubleValue() {
            return 0;
        }
    }

    /** A CharSequence whose {@code toString} throws. */
    static final class BadText implements CharSequence {
        @Override
        public int length() {
            return 1;
        }

        @Override
        public char charAt(int index) {
            return 'x';
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return this;
        }

        @Override
        public String toString() {
            throw new IllegalStateException("text broke");
        }
    }

    /** An exception whose message and text throw. */
    static final class Unprintable extends RuntimeException {
        @Override
        public String getMessage() {
            throw new IllegalStateException("getMessage broke");
        }

        @Override
        public String toString() {
            throw new IllegalStateException("toString broke");
        }
    }

    /** An iterable that throws after {@code good} items. */
    static Iterable<Object> throwingIterable(int good) {
        return () -> new Iterator<>() {
            private int at;

            @Override
            public boolean hasNext() {
                return true;
            }

            @Override
            public Object next() {
                if (at++ >= good) {
                    throw new UncheckedIOException(new IOException("iteration broke"));
                }
                return at;
            }
        };
    }

    /** A map whose entries cannot be read. */
    static Map<String, Object> throwingMap() {
        return new AbstractMap<>() {
            @Override
            public Set<Entry<String, Object>> entrySet() {
                throw new IllegalStateException("entries broke");
            }
        };
    }

    private static final String[] WORDS = {
        "", "a", "key", "ünï", "\u0000", "\t\n\"\\", "\ud800", "\udfff", "a\ud800b", "\ud83d\ude00", "$ref", "__proto__", "</script>",
    };

    static String text(Random r) {
        switch (r.nextInt(6)) {
            case 0:
                return WORDS[r.nextInt(WORDS.length)];
            case 1:
                return "x".repeat(1 + r.nextInt(5000));
            default: {
                StringBuilder sb = new StringBuilder();
                int n = r.nextInt(12);
                for (int i = 0; i < n; i++) {
                    switch (r.nextInt(4)) {
                        case 0 -> sb.append((char) r.nextInt(0x80));
                        case 1 -> sb.append((char) (0xD800 + r.nextInt(0x800))); // a surrogate, likely lone
                        case 2 -> sb.append((char) (0x80 + r.nextInt(0xFF7F)));
                        default -> sb.append(WORDS[r.nextInt(WORDS.length)]);
                    }
                }
                return sb.toString();
            }
        }
    }

    private static final int[] CHAIN = {1, 60, 63, 64, 65, 72, 500, 20000};

    /** {@code n} containers, one in the other, of mixed kinds (an Optional is no container). */
    static Object chain(Random r, int n) {
        Object v = r.nextBoolean() ? "leaf" : new int[] {1};
        int kind = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            int k = kind == 4 ? r.nextInt(4) : kind;
            v = switch (k) {
                case 0 -> List.of(v);
                case 1 -> Map.of("n", v);
                case 2 -> new Object[] {v};
                default -> new Box(r.nextInt(4) == 0 ? Optional.of(v) : v);
            };
        }
        return v;
    }

    static Object cycle(Random r) {
        switch (r.nextInt(4)) {
            case 0: {
                List<Object> l = new ArrayList<>();
                l.add(1);
                l.add(new Object[] {l});
                return l;
            }
            case 1: {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("me", m);
                return m;
            }
            case 2: {
                List<Object> l = new ArrayList<>();
                l.add(new Box(Optional.of(l)));
                return l;
            }
            default: {
                Object[] a = new Object[1];
                a[0] = a;
                return a;
            }
        }
    }

    /** A value with a shared (not cyclic) part: a DAG is a tree twice over. */
    static Object shared(Random r, int depth) {
        Object part = value(r, depth + 1);
        return java.util.Arrays.asList(part, java.util.Collections.singletonMap("again", part));
    }

    static Object value(Random r, int depth) {
        int pick = r.nextInt(depth >= 4 ? 22 : 28);
        switch (pick) {
            case 0:
                return null;
            case 1:
                return r.nextBoolean();
            case 2: {
                Object[] ints = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, (byte) 7, (short) -3,
                    new AtomicInteger(5), new AtomicLong(-9), r.nextInt(), BigInteger.TWO.pow(64).subtract(BigInteger.ONE),
                    BigInteger.TWO.pow(64), BigInteger.TEN.pow(40).negate(), BigInteger.valueOf(Long.MIN_VALUE).subtract(BigInteger.ONE),
                    BigInteger.TEN.pow(20), BigInteger.valueOf(r.nextLong())};
                return ints[r.nextInt(ints.length)];
            }
            case 3: {
                Object[] ds = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e308, -1e-308, Double.MIN_VALUE, -0.0, 0.1,
                    r.nextDouble() * 1e6, 1e15, 123456789012345678.0, Float.NaN, 0.1f, Float.MAX_VALUE, Float.NEGATIVE_INFINITY, 2.5, 1e21, 1e20};
                return ds[r.nextInt(ds.length)];
            }
            case 4: {
                Object[] bs = {new BigDecimal("1E+400"), new BigDecimal("0.1"), new BigDecimal("12.50"), new BigDecimal("1E-400"),
                    new BigDecimal("3.14159265358979323846264338327950288"), new BigDecimal("-0.0"), new BigDecimal("1E+3"),
                    new OddNumber("1"), new OddNumber("NaN"), new OddNumber("1,\"injected\":2"), new OddNumber(null), new OddNumber("")};
                return bs[r.nextInt(bs.length)];
            }
            case 5:
            case 6:
                return text(r);
            case 7:
                return r.nextBoolean() ? (char) (0xD800 + r.nextInt(0x800)) : (char) (0x20 + r.nextInt(0x5F));
            case 8: {
                Object[] es = {Priority.HIGH, TimeUnit.SECONDS, DayOfWeek.FRIDAY};
                return es[r.nextInt(es.length)];
            }
            case 9: {
                Object[] xs = {new Object(), new Date(0), UUID.randomUUID(), URI.create("https://example.invalid/a?b"),
                    Duration.ofMillis(-1500), String.class, (Runnable) () -> {}, new Bean(), new byte[] {1, 2}, new char[] {'a'},
                    Thread.State.NEW, new StringBuilder("sb\ud800")};
                return xs[r.nextInt(xs.length)];
            }
            case 10:
                return r.nextBoolean() ? throwingIterable(r.nextInt(3)) : throwingMap();
            case 11:
                return r.nextBoolean() ? new Broken(1) : new BadText();
            case 12: {
                Map<Object, Object> m = new LinkedHashMap<>();
                switch (r.nextInt(6)) {
                    case 0 -> m.put(null, 1);
                    case 1 -> m.put(new BadKey(), 1);
                    case 2 -> m.put(7, "seven");
                    case 3 -> m.put(Priority.LOW, "low");
                    case 4 -> {
                        m.put(1, "int");
                        m.put("1", "text");
                    }
                    default -> {
                        m.put("\ud800", 1);
                        m.put("\udfff", 2);
                    }
                }
                return m;
            }
            case 13:
                return chain(r, CHAIN[r.nextInt(CHAIN.length)]);
            case 14:
                return cycle(r);
            case 15:
                return r.nextInt(3) == 0 ? Optional.empty() : Optional.ofNullable(value(r, depth + 1));
            case 16:
                return new Order(text(r), Priority.values()[r.nextInt(2)], r.nextDouble(),
                    List.of(new Line(text(r), r.nextInt())), null);
            case 17: {
                Object[] arrays = {new int[] {1, -2}, new long[] {Long.MAX_VALUE}, new short[] {3}, new double[] {0.5, Double.NaN},
                    new double[] {1.5}, new float[] {Float.POSITIVE_INFINITY}, new float[] {0.25f}, new boolean[] {true, false}, new int[0]};
                return arrays[r.nextInt(arrays.length)];
            }
            case 18:
                return shared(r, depth);
            case 19:
                return new Box(value(r, depth + 1));
            case 20:
            case 21:
            case 22:
            case 23: {
                List<Object> l = new ArrayList<>();
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    l.add(value(r, depth + 1));
                }
                return r.nextBoolean() ? l : l.toArray();
            }
            default: {
                Map<String, Object> m = new LinkedHashMap<>();
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    m.put(text(r), value(r, depth + 1));
                }
                return m;
            }
        }
    }

    /** A throwable of any sort, as host code may throw it. */
    static Throwable throwable(Random r) {
        switch (r.nextInt(14)) {
            case 0:
                return new RuntimeException(text(r));
            case 1:
                return new IllegalStateException((String) null);
            case 2:
                return new Unprintable();
            case 3:
                return new StackOverflowError();
            case 4:
                return new AssertionError("assertion " + text(r));
            case 5:
                return new InterruptedException("interrupted by the host");
            case 6:
                return new CancellationException("cancelled by the host");
            case 7:
                return new TimeoutException(text(r));
            case 8:
                return new OutOfMemoryError("pretend");
            case 9:
                return new IOException("checked " + text(r));
            case 10:
                return new RuntimeException("x".repeat(1 << 20));
            case 11: {
                RuntimeException a = new RuntimeException("a");
                RuntimeException b = new RuntimeException("b", a);
                a.initCause(b);
                return a;
            }
            case 12:
                return new ExceptionInInitializerError(new IllegalStateException(text(r)));
            default:
                return new Error(text(r));
        }
    }

    /** Throws [t] from code that declares only unchecked exceptions. */
    @SuppressWarnings("unchecked")
    static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** Printable ASCII, the rest escaped, at most {@code max} characters: for failure messages. */
    static String safe(String s, int max) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            if (sb.length() >= max) {
                sb.append("...");
                break;
            }
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7F) {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }

    /** The value as a failure message shows it. */
    static String describe(Object v) {
        Expect e = Expect.of(v, 0);
        if (e.canonical != null) {
            return safe(e.canonical, 300);
        }
        String type = v == null ? "null" : v.getClass().getName();
        return type + " (" + e.why + ")";
    }

    /**
     * What the SDK must do with a value where it enters, inside a document that nests it
     * {@code nesting} levels down: refuse it (no JSON form, or beyond the limits of docs/behaviour.md §7),
     * take it and give back {@link #canonical} ({@link #exact}), or either (the core decides:
     * a long decimal, a huge integer, keys that collide once lone surrogates are replaced).
     */
    static final class Expect {
        boolean refuse;
        boolean exact;
        String canonical;
        String why;

        static Expect of(Object v, int nesting) {
            Expect e = new Expect();
            Writer w = new Writer(false);
            try {
                e.canonical = w.write(v, 0);
            } catch (NoJson no) {
                e.refuse = true;
                e.why = no.getMessage();
                return e;
            }
            if (w.deepest + nesting > 64) {
                e.refuse = true;
                e.why = "nested " + w.deepest + " + " + nesting + " levels";
                return e;
            }
            e.exact = !w.inexact;
            return e;
        }

        /** The canonical form of a value the SDK handed back (plain Java values). */
        static String canon(Object v) {
            try {
                return new Writer(true).write(v, 0);
            } catch (NoJson no) {
                return "<" + no.getMessage() + ">";
            }
        }
    }

    static final class NoJson extends Exception {
        NoJson(String why) {
            super(why, null, false, false);
        }
    }

    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX = BigInteger.TWO.pow(64).subtract(BigInteger.ONE);

    /**
     * The JSON of a Java value as the SDK documents it (AgentSdk: records, Optionals, enums,
     * primitive arrays, maps with keys as text), keys sorted, numbers by value, lone
     * surrogates as U+FFFD.
     */
    private static final class Writer {
        final IdentityHashMap<Object, Boolean> open = new IdentityHashMap<>();
        int deepest;
        boolean inexact;
        final boolean received;

        Writer(boolean received) {
            this.received = received;
        }

        String write(Object v, int depth) throws NoJson {
            if (v == null) {
                return "null";
            }
            if (v instanceof String s) {
                return quote(s);
            }
            if (v instanceof Character c) {
                return quote(String.valueOf(c));
            }
            if (v instanceof Boolean b) {
                return b.toString();
            }
            if (v instanceof Double d) {
                if (!Double.isFinite(d)) {
                    throw new NoJson("number " + d);
                }
                return number(new BigDecimal(d));
            }
            if (v instanceof Float f) {
                if (!Float.isFinite(f)) {
                    throw new NoJson("number " + f);
                }
                return floatNumber(f);
            }
            if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || v instanceof AtomicInteger || v instanceof AtomicLong) {
                return Long.toString(((Number) v).longValue());
            }
            if (v instanceof BigInteger i) {
                if (i.compareTo(MIN) < 0 || i.compareTo(MAX) > 0) {
                    inexact = true;
                }
                return i.toString();
            }
            if (v instanceof BigDecimal d) {
                if (received && Double.isFinite(d.doubleValue())) {
                    // The SDK hands a float back as the exact decimal of its text when Java
                    // would print the Double otherwise (`5e-324`): it is that float.
                    return number(new BigDecimal(d.doubleValue()));
                }
                // A caller's decimal is read as a 64-bit float (or refused, out of its range).
                inexact = true;
                return d.toString();
            }
            if (v instanceof Number n) {
                String text;
                try {
                    text = n.toString();
                } catch (RuntimeException e) {
                    throw new NoJson("number text throws");
                }
                if (!text.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                    throw new NoJson("number text " + text);
                }
                inexact = true;
                return text;
            }
            if (v instanceof Enum<?> en) {
                return quote(en.name());
            }
            if (v instanceof Optional<?> o) {
                return write(o.orElse(null), depth);
            }
            if (v instanceof CharSequence cs) {
                try {
                    return quote(cs.toString());
                } catch (RuntimeException e) {
                    throw new NoJson("text throws");
                }
            }
            if (v instanceof int[] a) {
                return primitives(depth, a.length, i -> Long.toString(a[i]));
            }
            if (v instanceof long[] a) {
                return primitives(depth, a.length, i -> Long.toString(a[i]));
            }
            if (v instanceof short[] a) {
                return primitives(depth, a.length, i -> Long.toString(a[i]));
            }
            if (v instanceof boolean[] a) {
                return primitives(depth, a.length, i -> Boolean.toString(a[i]));
            }
            if (v instanceof double[] a) {
                for (double d : a) {
                    if (!Double.isFinite(d)) {
                        throw new NoJson("number " + d);
                    }
                }
                return primitives(depth, a.length, i -> number(new BigDecimal(a[i])));
            }
            if (v instanceof float[] a) {
                for (float d : a) {
                    if (!Float.isFinite(d)) {
                        throw new NoJson("number " + d);
                    }
                }
                return primitives(depth, a.length, i -> floatNumber(a[i]));
            }
            if (v instanceof Map<?, ?> || v instanceof Iterable<?> || v instanceof Object[] || v instanceof Record) {
                return container(v, depth);
            }
            throw new NoJson("a " + v.getClass().getName());
        }

        private String container(Object v, int depth) throws NoJson {
            if (depth >= 66) {
                // Deeper than any limit: no need to look further (a chain may be 20000 long).
                deepest = Math.max(deepest, depth + 1);
                throw new NoJson("nested more than 64 levels");
            }
            deepest = Math.max(deepest, depth + 1);
            if (open.put(v, true) != null) {
                throw new NoJson("a cycle");
            }
            try {
                if (v instanceof Map<?, ?> m) {
                    List<Map.Entry<?, ?>> entries;
                    try {
                        entries = new ArrayList<>(m.entrySet());
                    } catch (RuntimeException e) {
                        throw new NoJson("entries throw");
                    }
                    Map<String, String> out = new LinkedHashMap<>();
                    for (Map.Entry<?, ?> entry : entries) {
                        Object k = entry.getKey();
                        String key;
                        if (k == null) {
                            throw new NoJson("a null key");
                        } else if (k instanceof Enum<?> en) {
                            key = en.name();
                        } else {
                            try {
                                key = k.toString();
                            } catch (RuntimeException e) {
                                throw new NoJson("a key's text throws");
                            }
                        }
                        String value = write(entry.getValue(), depth + 1);
                        if (out.put(key, value) != null) {
                            inexact = true; // two keys of one text: which is kept is not checked
                        }
                    }
                    TreeMap<String, String> sorted = new TreeMap<>();
                    for (Map.Entry<String, String> entry : out.entrySet()) {
                        String key = quote(entry.getKey());
                        if (sorted.put(key, entry.getValue()) != null) {
                            inexact = true; // keys that differ only in lone surrogates
                        }
                    }
                    StringBuilder sb = new StringBuilder("{");
                    for (Map.Entry<String, String> entry : sorted.entrySet()) {
                        if (sb.length() > 1) {
                            sb.append(',');
                        }
                        sb.append(entry.getKey()).append(':').append(entry.getValue());
                    }
                    return sb.append('}').toString();
                }
                List<Object> items = new ArrayList<>();
                if (v instanceof Record rec) {
                    StringBuilder sb = new StringBuilder("{");
                    TreeMap<String, String> sorted = new TreeMap<>();
                    for (var component : rec.getClass().getRecordComponents()) {
                        Object value;
                        try {
                            component.getAccessor().setAccessible(true);
                            value = component.getAccessor().invoke(rec);
                        } catch (ReflectiveOperationException | RuntimeException e) {
                            throw new NoJson("an accessor throws");
                        }
                        sorted.put(quote(component.getName()), write(value, depth + 1));
                    }
                    for (Map.Entry<String, String> entry : sorted.entrySet()) {
                        if (sb.length() > 1) {
                            sb.append(',');
                        }
                        sb.append(entry.getKey()).append(':').append(entry.getValue());
                    }
                    return sb.append('}').toString();
                }
                if (v instanceof Object[] a) {
                    items.addAll(java.util.Arrays.asList(a));
                } else {
                    try {
                        for (Object item : (Iterable<?>) v) {
                            items.add(item);
                        }
                    } catch (RuntimeException e) {
                        throw new NoJson("iteration throws");
                    }
                }
                StringBuilder sb = new StringBuilder("[");
                for (Object item : items) {
                    if (sb.length() > 1) {
                        sb.append(',');
                    }
                    sb.append(write(item, depth + 1));
                }
                return sb.append(']').toString();
            } finally {
                open.remove(v);
            }
        }

        private String primitives(int depth, int n, java.util.function.IntFunction<String> item) {
            deepest = Math.max(deepest, depth + 1);
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    sb.append(',');
                }
                sb.append(item.apply(i));
            }
            return sb.append(']').toString();
        }
    }

    /** A float is the double its shortest decimal reads as (`0.1f` is 0.1). */
    static String floatNumber(float f) {
        return number(new BigDecimal(Double.parseDouble(Float.toString(f))));
    }

    /** A number by value: an exact decimal without trailing zeros. */
    static String number(BigDecimal d) {
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }

    /** A JSON string, lone surrogates as U+FFFD, everything outside ASCII escaped. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                sb.append(String.format("\\u%04x\\u%04x", (int) c, (int) s.charAt(i + 1)));
                i++;
                continue;
            }
            if (Character.isSurrogate(c)) {
                c = '\uFFFD';
            }
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c >= 0x7F) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
