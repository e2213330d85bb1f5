import Foundation

/// One `modelcast` run and the bytes it read (Linux `rchar`: read, pread and sendfile
/// alike), measured by a python wrapper whose own counter gains the child's once it has
/// been waited for. What a "reads each input once" test compares.
package struct BytesReadRun {
    /// The run's exit status (0: it succeeded).
    package let status: Int32
    /// What it read, in bytes.
    package let bytes: Int
    /// Its standard error (the wrapper's own output is the two numbers).
    package let stderr: String

    /// Runs `modelcast` with `arguments` and `environment`; its stderr goes through `errorFile`.
    package init(_ arguments: [String], environment: [String: String]?, errorFile: String) throws {
        let wrapper = """
            import subprocess, sys
            def rchar():
                return int(next(l for l in open("/proc/self/io") if l.startswith("rchar:")).split()[1])
            before = rchar()
            with open(sys.argv[1], "w") as err:
                status = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
            print(status, rchar() - before)
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", wrapper, errorFile, modelcastBinary] + arguments, environment: environment)
        let fields = result.stdout.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        status = fields.first.flatMap { Int32($0) } ?? -1
        bytes = fields.count == 2 ? Int(fields[1]) ?? .max : .max
        stderr = result.stderr + ((try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "")  // no file: the wrapper failed, its stderr says why
    }
}
