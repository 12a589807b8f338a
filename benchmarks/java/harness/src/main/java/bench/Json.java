package bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Just enough JSON for the RESULT lines: write maps, lists, strings, numbers; read them back. */
public final class Json {
    private Json() {}

    /** The value as JSON text. */
    public static String write(Object v) {
        StringBuilder sb = new StringBuilder();
        write(sb, v);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) sb.append(',');
                first = false;
                write(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof List<?> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) sb.append(',');
                write(sb, l.get(i));
            }
            sb.append(']');
        } else if (v instanceof Double d) {
            sb.append(d.isNaN() || d.isInfinite() ? "null" : String.valueOf(Math.round(d * 1000) / 1000.0));
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else {
            String s = v.toString();
            sb.append('"');
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') sb.append('\\').append(c);
                else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                else sb.append(c);
            }
            sb.append('"');
        }
    }

    /** Parses JSON text (objects as LinkedHashMap, arrays as ArrayList, numbers as Double). */
    public static Object read(String text) {
        int[] pos = {0};
        Object v = value(text, pos);
        return v;
    }

    private static void ws(String s, int[] p) {
        while (p[0] < s.length() && Character.isWhitespace(s.charAt(p[0]))) p[0]++;
    }

    private static Object value(String s, int[] p) {
        ws(s, p);
        char c = s.charAt(p[0]);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            p[0]++;
            ws(s, p);
            if (s.charAt(p[0]) == '}') {
                p[0]++;
                return m;
            }
            while (true) {
                ws(s, p);
                String k = (String) value(s, p);
                ws(s, p);
                p[0]++; // ':'
                m.put(k, value(s, p));
                ws(s, p);
                if (s.charAt(p[0]++) == '}') return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            p[0]++;
            ws(s, p);
            if (s.charAt(p[0]) == ']') {
                p[0]++;
                return l;
            }
            while (true) {
                l.add(value(s, p));
                ws(s, p);
                if (s.charAt(p[0]++) == ']') return l;
            }
        }
        if (c == '"') {
            StringBuilder sb = new StringBuilder();
            p[0]++;
            while (s.charAt(p[0]) != '"') {
                char ch = s.charAt(p[0]++);
                if (ch == '\\') {
                    char e = s.charAt(p[0]++);
                    if (e == 'u') {
                        sb.append((char) Integer.parseInt(s.substring(p[0], p[0] + 4), 16));
                        p[0] += 4;
                    } else {
                        sb.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                    }
                } else {
                    sb.append(ch);
                }
            }
            p[0]++;
            return sb.toString();
        }
        if (s.startsWith("null", p[0])) {
            p[0] += 4;
            return null;
        }
        if (s.startsWith("true", p[0])) {
            p[0] += 4;
            return true;
        }
        if (s.startsWith("false", p[0])) {
            p[0] += 5;
            return false;
        }
        int start = p[0];
        while (p[0] < s.length() && "+-0123456789.eE".indexOf(s.charAt(p[0])) >= 0) p[0]++;
        return Double.parseDouble(s.substring(start, p[0]));
    }
}
