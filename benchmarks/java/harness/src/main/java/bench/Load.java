package bench;

import java.nio.file.Files;
import java.nio.file.Path;

/** The machine's load averages (1, 5, 15 minutes) from /proc/loadavg. */
public final class Load {
    private Load() {}

    /** The three load averages, or NaNs where /proc/loadavg cannot be read. */
    public static double[] now() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
        } catch (Exception e) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
    }
}
