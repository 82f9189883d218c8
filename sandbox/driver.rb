# frozen_string_literal: true

require 'open3'
require 'shellwords'

# The Ruby face of sandbox/sandbox.sh, for every Ruby program that drives a
# sandbox host: the acceptance suite's harness (spec/acceptance) and the bench
# (bench/). It runs sandbox.sh's verbs, runs bounded commands inside a sandbox
# and polls for a condition; what each caller makes of the answers is its own.
# It lives beside sandbox.sh because it knows that script's verbs, its
# EXEC_TIMEOUT and its state directory, and nothing of either caller.
module SandboxDriver
  SANDBOX_SH = File.join(__dir__, 'sandbox.sh')
  # The settings every sandbox script sources (paths inside a sandbox, ports).
  SANDBOX_LIB = File.join(__dir__, 'lib.sh')
  # Where sandbox.sh binds MODULE_DIR inside a sandbox, read-only, on the base
  # modulepath (its SANDBOX_MODULE_PATH).
  MODULE_BOUND = '/etc/puppet/code/modules/clone_army'

  # What a command inside a sandbox did: its output, its exit status (128 + the
  # signal when a signal ended it) and the command, for messages.
  Result = Struct.new(:stdout, :stderr, :exitstatus, :command) do
    def output
      stdout + stderr
    end

    def success?
      exitstatus.zero?
    end

    def to_s
      "`#{command}` exited #{exitstatus}\n--- stdout ---\n#{stdout}\n--- stderr ---\n#{stderr}"
    end
  end

  module_function

  # "HH:MM:SS [tag] message" on stderr, as the sandbox scripts log.
  def log(tag, message)
    warn "#{Time.now.utc.strftime('%H:%M:%S')} [#{tag}] #{message}"
  end

  # The values of the named variables of sandbox/lib.sh, by name, read by bash
  # itself, so that each is written once, in lib.sh.
  def lib(*names)
    script = "source \"$1\" && printf '%s\\n' #{names.map { |n| "\"$#{n}\"" }.join(' ')}"
    out, status = Open3.capture2('bash', '-c', script, 'bash', SANDBOX_LIB)
    raise "#{SANDBOX_LIB} could not be read" unless status.success?

    names.zip(out.lines.map(&:chomp)).to_h
  end

  # sandbox.sh VERB NAME (up, down, server, restart, status), its output
  # streamed to our stderr; env adds to the environment sandbox.sh reads
  # (SERVER_ADDR, MODULE_DIR, ...). Raises on failure.
  def verb!(verb, name, env: {})
    ok = system(env, 'bash', SANDBOX_SH, verb, name, out: $stderr, err: $stderr)
    raise "sandbox.sh #{verb} #{name} failed" unless ok
  end

  # Runs argv inside sandbox `name`, bounded by timeout seconds (sandbox.sh's
  # EXEC_TIMEOUT); never raises on a non-zero exit (the caller judges the Result).
  #
  # Not Open3.capture3: on an interrupt it waits for the child to finish (an
  # apply can take minutes) before the teardown can run. Here an interrupt
  # leaves the child behind, and taking the sandbox down ends it.
  def exec(name, *argv, timeout:, env: {})
    out_r, out_w = IO.pipe
    err_r, err_w = IO.pipe
    pid = Process.spawn(env.merge('EXEC_TIMEOUT' => timeout.to_s), 'bash', SANDBOX_SH, 'exec', name, *argv,
                        in: File::NULL, out: out_w, err: err_w)
    [out_w, err_w].each(&:close)
    readers = [out_r, err_r].map { |io| Thread.new { io.read } }
    _, status = Process.wait2(pid)
    Result.new(readers[0].value, readers[1].value, status.exitstatus || (128 + status.termsig.to_i),
               argv.shelljoin)
  end

  # Polls the block every interval seconds until it returns a truthy value,
  # at most timeout seconds (and so a bounded number of times). Returns the
  # value, or nil on timeout.
  def wait_for(timeout:, interval: 3)
    deadline = Time.now + timeout
    loop do
      value = yield
      return value if value
      return nil if Time.now >= deadline

      sleep interval
    end
  end

  # The domain of sandbox `name`: its own certname (sandbox.sh writes it into
  # its /etc/hosts), under which its clones are named.
  def domain(name)
    "#{name}.sandbox.test"
  end

  # Sandbox `name`'s state directory on this machine (sandbox/lib.sh's
  # sandbox_dir, under SANDBOX_CACHE).
  def state_dir(name)
    File.join(ENV.fetch('SANDBOX_CACHE', '/var/cache/clone-army-sandbox'), 'sandboxes', name)
  end

  # Whether anything is still mounted at or below sandbox `name`'s state
  # directory (after a down: nothing should be).
  def mounts_left?(name, mountinfo: File.read('/proc/self/mountinfo'))
    dir = state_dir(name)
    mountinfo.each_line.any? do |line|
      point = line.split[4].to_s
      point == dir || point.start_with?("#{dir}/")
    end
  end
end
