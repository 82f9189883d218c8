# frozen_string_literal: true

require 'json'
require_relative 'answer'
require_relative 'call_limits'
require_relative 'ramp_args'
require_relative 'record_dir'
require_relative 'runner'
require_relative 'schema'
require_relative 'service_address'
require_relative 'task_io'

module PuppetX
  module CloneArmy
    # What the Bolt tasks in tasks/ share: reading their parameters (JSON on
    # stdin), turning them into the helper's argv, running it without a
    # shell under the time limit the providers' calls have (Runner,
    # CallLimits), and printing its answer for Bolt once it holds to the
    # protocol the providers hold it to (Answer).
    #
    # Plain Ruby and the json library only: a task runs with whatever Ruby
    # the target has (Debian's, or the AIO agent's), without Puppet loaded.
    # Bolt copies these files next to the task (the tasks' metadata lists
    # them in "files").
    module Task
      DEFAULT_HELPER = Schema.fetch('helper_path')

      # Clone names, as the helper accepts them.
      CLONE_NAME = Schema.name_pattern(:clone)
      REPORT_FORMATS = Schema.fetch('report_formats', 'live').freeze
      # What a recorded run (`from`) is reported as.
      RECORDED_FORMATS = Schema.fetch('report_formats', 'recorded').freeze
      # Formats the helper answers in plain text, not in its JSON envelope.
      TEXT_FORMATS = Schema.fetch('report_formats', 'text').freeze
      # Views of the live fleet, which a recorded run does not have.
      LIVE_VIEWS = ['interval', 'server', 'puppetdb', 'ca_cert', 'client_cert', 'client_key'].freeze
      FLEET_ACTIONS = ['start', 'stop', 'status'].freeze
      # The format a task asks for when it reads the answer: the helper's
      # default (`auto`) answers a table when stdout is a terminal.
      JSON_FORMAT = ['--format', 'json'].freeze

      # A parameter that does not fit, or a helper that is not there.
      ParameterError = TaskIO::ParameterError

      # The helper ended by a signal, without an answer (the kernel's
      # out-of-memory killer sends SIGKILL): Bolt's `_error`, never a crash.
      class HelperKilled < StandardError
        attr_reader :signal_number

        def initialize(signal_number)
          @signal_number = signal_number
          oom = signal_name == 'SIGKILL' ? "; the kernel's out-of-memory killer sends SIGKILL: see the kernel log (journalctl -k)" : ''
          super("clone-army was killed by #{signal_name} before it answered#{oom}")
        end

        def signal_name
          name = signal_number && Signal.signame(signal_number)
          name ? "SIG#{name}" : "signal #{signal_number.inspect}"
        end

        # [Bolt's answer, exit status], the status as a shell gives it (128 + N).
        def answer
          [{ '_error' => { 'kind' => 'clone_army/helper-killed', 'msg' => message,
                           'details' => { 'signal' => signal_name, 'signal_number' => signal_number } } },
           128 + signal_number.to_i]
        end
      end

      module_function

      # --- argv of each task (everything after the helper's path) ---

      # The report's argv: a recorded run's with `from`, else the live fleet's.
      def report_args(params)
        return recorded_report_args(params) if given?(params, 'from')
        raise ParameterError.new('output', 'output is where the page of a recorded run goes: give from as well') if given?(params, 'output')

        live_report_args(params)
      end

      # clone-army report [--interval S] [--server ADDRESS] [--puppetdb ADDRESS] [--ca-cert PATH]
      #                    [--client-cert PATH --client-key PATH] --format F
      # F is json unless the task's `format` names another.
      def live_report_args(params)
        args = ['report']
        args += ['--interval', positive_integer(params, 'interval').to_s] if given?(params, 'interval')
        args + view_args(params) + ['--format', given?(params, 'format') ? one_of(params, 'format', REPORT_FORMATS) : 'json']
      end

      # [--server ADDRESS] [--puppetdb ADDRESS] [--ca-cert PATH] [--client-cert PATH --client-key PATH]
      def view_args(params)
        asked = ['server', 'puppetdb'].select { |key| given?(params, key) }
        addresses = asked.flat_map { |key| ["--#{key}", service_address(params, key)] }
        ca_cert = given?(params, 'ca_cert') ? ['--ca-cert', absolute_path(params, 'ca_cert')] : []
        addresses + ca_cert + client_cert_args(params)
      end

      # clone-army report --from TIMELINE [--format json|table | --format html --output PAGE]
      # Both in the recorder's directory (RecordDir). The page always goes to a
      # file, whose path the answer holds: by default the timeline's, with
      # `.html` for its extension.
      def recorded_report_args(params)
        live = LIVE_VIEWS.find { |key| given?(params, key) }
        raise ParameterError.new(live, "#{live} asks the live fleet; a recorded run (from) has its views in its timeline") if live

        format = recorded_format(params)
        dir = RecordDir.path
        timeline = RecordDir.entry(params['from'], 'from', dir)
        return ['report', '--from', timeline, '--format', format] if format != 'html'

        page = given?(params, 'output') ? params['output'] : default_page(timeline)
        ['report', '--from', timeline, '--format', 'html', '--output', RecordDir.entry(page, 'output', dir, RecordDir::PAGE_SUFFIX)]
      end

      # A recorded run's format: json by default; `output` only with html.
      def recorded_format(params)
        format = given?(params, 'format') ? one_of(params, 'format', RECORDED_FORMATS) : 'json'
        output = given?(params, 'output')
        raise ParameterError.new('output', 'output is where the page goes: give format html') if output && format != 'html'

        format
      end

      # /var/log/puppet-clone-army/timeline.jsonl -> /var/log/puppet-clone-army/timeline.html
      def default_page(timeline)
        dir = File.dirname(timeline)
        File.join(dir, "#{File.basename(timeline).sub(%r{\.[^.]*\z}, '')}#{RecordDir::PAGE_SUFFIX}")
      end

      # clone-army exec (--clone NAME... | --all) [--concurrency N] [--timeout S] --format json -- COMMAND...
      # Without `clones` the command runs in every clone.
      def exec_args(params)
        command = params['command']
        unless string_list?(command, %r{\A.}m)
          raise ParameterError.new('command', 'command must be a non-empty array of non-empty strings, e.g. ["puppet", "agent", "-t"]')
        end

        args = ['exec', *clone_selection(params)]
        args += ['--concurrency', positive_integer(params, 'concurrency').to_s] if given?(params, 'concurrency')
        args += ['--timeout', positive_integer(params, 'timeout').to_s] if given?(params, 'timeout')
        args + [*JSON_FORMAT, '--', *command]
      end

      def fleet_action(params)
        raise ParameterError.new('action', "action must be one of #{FLEET_ACTIONS.join(', ')}") unless given?(params, 'action')

        one_of(params, 'action', FLEET_ACTIONS)
      end

      # The argv that starts or stops every clone of a `clone list` result.
      def fleet_args(action, clones)
        ['clone', action, '--', *clones.map { |clone| clone['name'] }]
      end

      # --- running the helper ---

      # The test hook that points the tasks at a stand-in helper. An environment
      # variable, never a parameter: a task runs as root, and under PE's RBAC
      # someone allowed only the report task must not choose what runs.
      TEST_HELPER_ENV = 'CLONE_ARMY_TASK_HELPER'

      # The installed helper, DEFAULT_HELPER (where class clone_army installs
      # it), and only that. A `helper` parameter (which older versions took) is
      # refused, not ignored.
      def helper_path(params)
        if params.key?('helper')
          raise ParameterError.new('helper', "the tasks run only the installed helper, #{DEFAULT_HELPER} " \
                                             '(class clone_army installs it); leave the helper parameter out')
        end

        ENV.fetch(TEST_HELPER_ENV, DEFAULT_HELPER)
      end

      # Runs argv (no shell) under its time limit and returns [stdout, exit
      # status]. The helper's stderr (progress, logs) goes to the task's
      # stderr.
      def run(argv)
        unless File.file?(argv.first) && File.executable?(argv.first)
          raise ParameterError.new('helper', "the clone-army helper is not installed at #{argv.first} " \
                                             '(class clone_army installs it there)',
                                   kind: 'helper-missing')
        end

        result = Runner.run(argv, timeout: time_limit(argv.drop(1), helper: argv.first))
        $stderr.write(result.stderr)
        raise HelperKilled, result.termsig if result.exitstatus.nil?

        [result.stdout, result.exitstatus]
      end

      # The call's limit (CallLimits), as for the providers, a `ramp run`'s
      # as the helper at `helper` answers it; none for `exec`, whose length
      # is the caller's (each clone's `timeout`, in waves of `concurrency`
      # over clones the task does not count), and whose commands the helper
      # itself stops at their timeout.
      def time_limit(args, helper: nil)
        args.first == 'exec' ? nil : CallLimits.seconds(args, helper: helper)
      end

      # The helper's answer, for Bolt: its JSON document as it is, with
      # Bolt's `_error` added when it failed or is not an answer of the
      # protocol (Answer); [document, exit status].
      def answer(stdout, exitstatus, argv)
        document = Answer.document(stdout, exitstatus, argv)
        Answer.result(document, exitstatus, argv)
        [document, exitstatus]
      rescue Answer::Refused => e
        refused(e, stdout)
      end

      # Bolt's answer for a Refused: the helper's own error as the helper
      # put it, or what is wrong with its answer, with the output it gave.
      def refused(error, stdout)
        exitstatus = error.exitstatus
        bolt_error = if error.helper_failure?
                       TaskIO.helper_error(error.document, exitstatus)
                     else
                       { 'kind' => "clone_army/#{error.kind}", 'msg' => error.message,
                         'details' => { 'stdout' => stdout.to_s[0, 2000], 'exitstatus' => exitstatus } }
                     end
        [(error.document || {}).merge('_error' => bolt_error), exitstatus.to_i.zero? ? 1 : exitstatus]
      end

      # Bolt's `_error` for a call stopped at its time limit.
      def timed_out(error)
        [{ '_error' => { 'kind' => 'clone_army/helper-timeout',
                         'msg' => "#{error.message}; #{Runner::Timeout::WHAT_TO_CHECK} and run the task again",
                         'details' => { 'seconds' => error.seconds } } }, 1]
      end

      # --- the tasks ---

      # clone_army::report: the helper's report; with --format table or
      # prometheus its text as it is; a recorded run's page, its path.
      def report_task(params)
        argv = [helper_path(params), *report_args(params)]
        stdout, exitstatus = run(argv)
        # Tables and Prometheus text come as they are; JSON and the page's
        # answer (the envelope with its path) are parsed.
        text = TEXT_FORMATS.include?(params['format'])
        text && exitstatus.zero? ? [stdout, 0] : answer(stdout, exitstatus, argv)
      end

      # clone_army::exec: the helper's answer (each clone's exit and time).
      def exec_task(params)
        argv = [helper_path(params), *exec_args(params)]
        answer(*run(argv), argv)
      end

      # clone_army::ramp: the helper's answer (the baseline), with the timeline's path.
      def ramp_task(params)
        argv = [helper_path(params), *RampArgs.argv(params)]
        document, exitstatus = answer(*run(argv), argv)
        document['result']['timeline'] = argv[argv.index('--timeline') + 1] if exitstatus.zero?
        [document, exitstatus]
      end

      # clone_army::fleet: `status` is the `clone list` answer; `start` and
      # `stop` act on every clone it lists, answering with the helper's
      # `clone start|stop` answer (or the listing when there is no clone).
      def fleet_task(params)
        action = fleet_action(params)
        helper = helper_path(params)
        list = [helper, 'clone', 'list', *JSON_FORMAT]
        stdout, exitstatus = run(list)
        listing, exitstatus = answer(stdout, exitstatus, list)
        return [listing, exitstatus] if action == 'status' || !exitstatus.zero?

        clones = listed_clones(listing)
        return refused(Answer.malformed(list, 0, '"result"."clones" is not a list of clones', listing), stdout) unless clones
        return [listing, 0] if clones.empty?

        argv = [helper, *fleet_args(action, clones)]
        answer(*run(argv), argv)
      end

      # The clones of a `clone list` answer; nil when it holds no such list.
      def listed_clones(listing)
        clones = listing.dig('result', 'clones')
        clones if clones.is_a?(Array) && clones.all? { |clone| clone.is_a?(Hash) && clone['name'].is_a?(String) }
      end

      # Reads the parameters from `input`, runs the task `name` with them,
      # prints its result to `output` and returns the exit status.
      def main(name, input = $stdin, output = $stdout)
        TaskIO.run(input, output) do |params|
          public_send(:"#{name}_task", params)
        rescue HelperKilled => e
          e.answer
        rescue Runner::Timeout => e
          timed_out(e)
        rescue Answer::Refused => e
          # The helper refused a call's time limit (CallLimits): the ramp's
          # arguments, as the ramp would.
          refused(e, e.document ? JSON.generate(e.document) : '')
        end
      end

      # --- parameter checks (Bolt checks the metadata's types too; a task
      # run by hand or by an older orchestrator is checked here) ---

      def given?(params, key)
        params.key?(key) && !params[key].nil?
      end

      def clone_selection(params)
        return ['--all'] unless given?(params, 'clones')

        clones = params['clones']
        unless string_list?(clones, CLONE_NAME)
          raise ParameterError.new('clones', 'clones must be a non-empty array of clone names ' \
                                             "(lower-case letters, digits and '-'), or left out for all clones")
        end
        clones.flat_map { |name| ['--clone', name] }
      end

      def positive_integer(params, key)
        value = params[key]
        check(key, value, value.is_a?(Integer) && value.positive?, 'a positive integer')
      end

      # A host, host:port or https:// URL, as the class takes it
      # (ServiceAddress); the helper makes the URL of a host, over TLS only.
      def service_address(params, key)
        value = params[key]
        check(key, value, ServiceAddress.valid?(value), ServiceAddress.forms(key))
      end

      # Both or neither: a certificate without its key cannot be presented.
      def client_cert_args(params)
        cert = given?(params, 'client_cert')
        key = given?(params, 'client_key')
        return [] unless cert || key
        raise ParameterError.new(cert ? 'client_key' : 'client_cert', 'client_cert and client_key go together') unless cert && key

        ['--client-cert', absolute_path(params, 'client_cert'), '--client-key', absolute_path(params, 'client_key')]
      end

      def absolute_path(params, key)
        value = params[key]
        check(key, value, value.is_a?(String) && value.start_with?('/'), 'an absolute path')
      end

      def one_of(params, key, allowed)
        value = params[key]
        check(key, value, allowed.include?(value), "one of #{allowed.join(', ')}")
      end

      # Whether `value` is a non-empty array of strings that match `pattern`.
      def string_list?(value, pattern)
        value.is_a?(Array) && !value.empty? && value.all? { |item| item.is_a?(String) && item.match?(pattern) }
      end

      # `value` when `good`, else a ParameterError saying what `key` must be.
      def check(key, value, good, what)
        raise ParameterError.new(key, "#{key} must be #{what}; got #{value.inspect}") unless good

        value
      end
    end
  end
end
