//! Child processes with deadlines, and long-running children tied to this
//! process's lifetime through their stdin.
//!
//! A tied child stops when its stdin reaches EOF. The write end lives only
//! in this process, so the child stops on [`Tied::stop`], on drop, and also
//! when the test binary exits without running destructors (statics), panics
//! into an abort, or is killed: the kernel closes the pipe in every case.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished (or timed-out) command left behind.
pub struct Finished {
    /// `None` when the deadline passed and the command was killed.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `command` to completion, feeding it `input`; kill it at `timeout`.
pub fn run(
    command: &mut Command,
    input: Option<&str>,
    timeout: Duration,
) -> std::io::Result<Finished> {
    command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let writer = match (input, child.stdin.take()) {
        (Some(text), Some(mut stdin)) => {
            let text = text.to_owned();
            Some(thread::spawn(move || {
                // A child that exits early closes its stdin: not our error.
                let _ = stdin.write_all(text.as_bytes());
            }))
        }
        _ => None,
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_until(&mut child, timeout)?;
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Wait for `child` at most `timeout`; `None` if it is still running.
pub fn wait_until(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// A long-running child that exits when its stdin closes.
pub struct Tied {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Tied {
    /// Spawn `command` with a piped stdin (the tie); stdout/stderr are the
    /// caller's choice.
    pub fn spawn(name: &str, command: &mut Command) -> std::io::Result<Tied> {
        let mut child = command.stdin(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        Ok(Tied {
            name: name.to_owned(),
            child,
            stdin,
        })
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The exit status if the child has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Close the tie and wait up to `timeout`; kill it after that.
    /// Returns the exit status, or an error naming the process when it had
    /// to be killed.
    pub fn stop(mut self, timeout: Duration) -> Result<ExitStatus, String> {
        self.stdin.take();
        match wait_until(&mut self.child, timeout) {
            Ok(Some(status)) => Ok(status),
            Ok(None) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(format!(
                    "{} did not stop within {timeout:?}; killed",
                    self.name
                ))
            }
            Err(err) => Err(format!("waiting for {}: {err}", self.name)),
        }
    }
}

impl Drop for Tied {
    fn drop(&mut self) {
        self.stdin.take();
        if !matches!(
            wait_until(&mut self.child, Duration::from_secs(20)),
            Ok(Some(_))
        ) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A shell wrapper that runs `program args...` and sends it SIGTERM when the
/// wrapper's stdin closes, then exits with the program's status. For
/// programs that have no stdin-EOF option of their own (forcegate serve).
pub fn tied_wrapper(program: &std::path::Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(
            r#""$@" </dev/null & child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
read -r _line || true
kill -TERM "$child" 2>/dev/null
wait "$child""#,
        )
        .arg("tied")
        .arg(program);
    command
}

/// Loopback only: no proxy between a child and the test API server.
pub fn without_proxy(command: &mut Command) -> &mut Command {
    command
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
}
