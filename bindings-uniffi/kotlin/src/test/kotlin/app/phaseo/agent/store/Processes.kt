package app.phaseo.agent.store

import java.io.BufferedReader
import java.io.File
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import app.phaseo.agent.parseJson
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.fail

/** The PostgreSQL of the tests (scripts/with-test-postgres.sh); without it the test FAILS. */
fun postgresUrl(): String =
    System.getenv("PHASEO_TEST_POSTGRES_URL")
        ?: fail("PHASEO_TEST_POSTGRES_URL is not set: run the Kotlin tests under scripts/with-test-postgres.sh; a PostgreSQL test never skips")

/** A fresh store spec of [backend]: `sqlite:<new file>` or the test server's URL. */
fun storeSpec(backend: String): String = when (backend) {
    "sqlite" -> "sqlite:" + Files.createTempDirectory("phaseo-store").resolve("runs.db")
    "postgres" -> postgresUrl()
    else -> error(backend)
}

/** Starts JVMs with the test classpath (what `make kotlin` compiled and wrote). */
object Jvm {
    private val classpath: String by lazy {
        val target = File("target").absoluteFile
        val deps = File(target, "classpath.txt")
        if (!deps.exists()) fail<Unit>("${deps.path} is missing: build with `make kotlin`")
        listOf(File(target, "classes").path, File(target, "test-classes").path, deps.readText().trim()).joinToString(File.pathSeparator)
    }

    private val java = File(System.getProperty("java.home"), "bin/java").path

    /** The command line of a JVM running [mainClass] with [args]. */
    fun command(mainClass: String, args: List<String>): List<String> = listOf(
        java, "-Djna.library.path=" + System.getProperty("jna.library.path"),
        "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss2m", "-cp", classpath, mainClass,
    ) + args

    /** A process running [mainClass] with [args], [env] added. */
    fun start(mainClass: String, args: List<String>, env: Map<String, String> = emptyMap()): Process {
        val command = command(mainClass, args)
        return ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).also { it.environment().putAll(env) }.start()
    }
}

/** An execution log shared by the workers of one test. */
class ExecLog {
    val file: File = Files.createTempFile("phaseo-exec", ".log").toFile()
    val lines: List<String> get() = file.readLines().filter { it.isNotBlank() }
}

/** The store worker ([StoreWorker.kt]) as a process. */
fun startWorker(spec: String, log: ExecLog, vararg args: String): Process =
    Jvm.start("app.phaseo.agent.store.StoreWorkerKt", listOf(spec) + args, mapOf("PHASEO_EXEC_LOG" to log.file.path))

/** The last JSON line of a finished worker (which must exit 0 within 120 s). */
fun answer(process: Process, reader: BufferedReader = process.inputStream.bufferedReader()): JsonObject {
    val out = reader.readText()
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly()
        fail<Unit>("worker did not finish")
    }
    assertEquals(0, process.exitValue(), out)
    return parseJson(out.trim().lines().last()).jsonObject
}

/** Runs a worker to its end. */
fun worker(spec: String, log: ExecLog, vararg args: String): JsonObject = answer(startWorker(spec, log, *args))

/** The first line a running worker prints. */
fun firstLine(reader: BufferedReader): JsonObject = parseJson(reader.readLine() ?: fail("worker exited early")).jsonObject

/** Sends [signal] (`STOP`, `CONT`) to [process]. */
fun signal(process: Process, signal: String) {
    assertEquals(0, ProcessBuilder("kill", "-$signal", process.pid().toString()).start().waitFor())
}
