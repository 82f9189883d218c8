# frozen_string_literal: true

require_relative '../../../sandbox/driver'

module CloneArmyBench
  # The bench's two sandbox hosts through the sandbox driver: NAME, the load
  # host with Puppet Server and the fleet, and PLAIN, a second host with no
  # fleet for the agent's CPU per run on a plain host.
  class BenchHost
    NAME = 'bench'
    PLAIN = 'benchplain'
    # inside.sh as the sandbox sees it, through the bound module checkout.
    INSIDE = File.join(SandboxDriver::MODULE_BOUND, 'bench', 'inside.sh').freeze
    # The clones' certnames' domain: the load host's own.
    DOMAIN = SandboxDriver.domain(NAME).freeze

    # A command inside that failed where the bench needs its answer.
    class Failed < RuntimeError; end

    attr_reader :settings

    def initialize(settings, module_dir)
      @settings = settings
      # What sandbox.sh reads: the server's address and name, the module it binds.
      @env = { 'SERVER_ADDR' => settings.server_addr, 'SERVER_NAME' => settings.server_name, 'MODULE_DIR' => module_dir }
    end

    def sandbox!(verb, name = NAME)
      SandboxDriver.verb!(verb, name, env: @env)
    end

    # sandbox.sh down NAME; false when it failed (the teardown goes on).
    def down(name)
      sandbox!('down', name)
      true
    rescue RuntimeError => e
      SandboxDriver.log('bench', e.message)
      false
    end

    # argv inside sandbox `sandbox`, bounded (EXEC_TIMEOUT); the Result.
    def run(*argv, sandbox: NAME, timeout: @settings.exec_timeout)
      SandboxDriver.exec(sandbox, *argv, timeout: timeout, env: @env)
    end

    # argv inside, its stdout; its stderr goes to `err` (a path, appended) or
    # ours; a non-zero exit is Failed.
    def run!(*argv, sandbox: NAME, timeout: @settings.exec_timeout, err: nil)
      result = run(*argv, sandbox: sandbox, timeout: timeout)
      err ? File.write(err, result.stderr, mode: 'a') : $stderr.write(result.stderr)
      raise Failed, "inside #{sandbox}: `#{result.command}` exited #{result.exitstatus}" unless result.success?

      result.stdout
    end

    # bench/inside.sh VERB ARGS... inside, its stdout (see inside.sh for the verbs).
    def inside_sh!(verb, *args, **opts)
      run!('bash', INSIDE, verb, *args, **opts)
    end
  end
end
