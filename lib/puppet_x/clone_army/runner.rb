# frozen_string_literal: true

require 'open3'

module PuppetX
  module CloneArmy
    # Runs one command (an argv array, never through a shell) with a time
    # limit, and keeps its stdout and stderr apart: the helper's answer is on
    # stdout, what it says to people on stderr.
    #
    # Puppet::Util::Execution.execute has no time limit, and a helper call
    # that hangs would hold the whole Puppet run (and the host's agent lock)
    # with it. A command still running at its deadline gets TERM, then KILL
    # after GRACE seconds, and the call fails.
    module Runner
      # What a finished command left: its stdout, its stderr, its exit
      # status, or (exitstatus nil) the signal that ended it.
      Result = Struct.new(:stdout, :stderr, :exitstatus, :termsig)

      # The command ran out of time (and was killed).
      class Timeout < StandardError
        # Where to look for what a helper that ran out of time waits for.
        WHAT_TO_CHECK = 'see what it waits for (journalctl, the lock /var/lib/puppet-clone-army/.lock)'

        attr_reader :seconds

        def initialize(argv, seconds)
          super("#{argv.first} did not finish within #{seconds} s and was stopped")
          @seconds = seconds
        end
      end

      GRACE = 10

      module_function

      def run(argv, timeout:)
        # [program, argv0] keeps a lone program name from ever reaching a shell.
        Open3.popen3([argv.first, argv.first], *argv.drop(1)) do |stdin, stdout, stderr, waiter|
          stdin.close
          readers = [stdout, stderr].map { |io| Thread.new { io.read } }
          stop(waiter, argv, timeout) unless waiter.join(timeout)
          status = waiter.value
          Result.new(readers[0].value.to_s, readers[1].value.to_s, status.exitstatus, status.termsig)
        end
      end

      def stop(waiter, argv, timeout)
        signal(waiter.pid, 'TERM')
        signal(waiter.pid, 'KILL') unless waiter.join(GRACE)
        waiter.join
        raise Timeout.new(argv, timeout)
      end

      def signal(pid, name)
        Process.kill(name, pid)
      rescue Errno::ESRCH
        nil
      end
    end
  end
end
