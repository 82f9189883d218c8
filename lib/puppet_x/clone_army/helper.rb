# frozen_string_literal: true

require 'json'
require 'puppet'
require_relative 'answer'
require_relative 'call_limits'
require_relative 'runner'
require_relative 'schema'
require_relative 'secrets'

module PuppetX
  module CloneArmy
    # A failure reported by (or about) the `clone-army` helper.
    #
    # `kind` is the helper's machine-readable error kind (docs/PROTOCOL.md),
    # or one of this wrapper's own: `helper-missing`, `helper-timeout`,
    # `malformed-output`, `protocol-mismatch`.
    class HelperError < Puppet::Error
      include Answer::Failure

      def initialize(message, **failure)
        super(message)
        describe_failure(**failure)
      end

      # The HelperError of an answer Answer refused.
      def self.from(refused)
        new(refused.message, **refused.failure)
      end
    end

    # The one place the providers run the `clone-army` helper and read its
    # answer.
    #
    # Every call runs the helper with an argv array (never through a shell)
    # under its time limit (Runner, CallLimits), reads the single JSON
    # document it prints on stdout (Answer) and returns its `result`.
    # Anything else is a HelperError: a non-zero exit, `ok: false`, an empty
    # or malformed answer, or another protocol version.
    #
    # Option flags go before `--`, names after it, so a name can never be
    # read as a flag.
    class Helper
      PROTOCOL_VERSION = Answer::PROTOCOL_VERSION
      DEFAULT_PATH = Schema.fetch('helper_path')
      CLONE_STATES = ['running', 'stopped'].freeze
      # What a listing verb is asked to answer in: its JSON envelope. Their
      # default, `auto`, answers a table when stdout is a terminal; this
      # reads a pipe, but never leaves what it parses to that rule.
      JSON_FORMAT = ['--format', 'json'].freeze

      attr_reader :path

      # The helper at `path` when given; otherwise DEFAULT_PATH (where class
      # clone_army installs it). Never one found on the PATH: whatever a
      # directory on it holds would run as root with what Puppet passes it.
      def self.resolve_path(path = nil)
        return path if path && !path.to_s.empty?

        DEFAULT_PATH
      end

      # The helper for a prefetch: the `helper` parameter of the resources in
      # the catalog (class clone_army gives all of them the same one).
      # What a prefetch lists: `verb`'s list, or, in a --noop run on a host
      # the class has not yet given the helper (it would install it in this
      # run), nothing, so that the run previews the fleet it would create.
      def self.listing_for_preview(resources, verb)
        for_resources(resources).public_send(verb)
      rescue HelperError => e
        raise unless e.kind == 'helper-missing' && Puppet[:noop]

        Puppet.notice("clone_army: #{e.message.split(':').first}; in this --noop run every clone and base is shown as new")
        []
      end

      def self.for_resources(resources)
        paths = resources.values.map { |resource| resource[:helper] }.compact.uniq
        Puppet.warning("clone_army: resources name different helpers (#{paths.join(', ')}); listing with #{paths.first}") if paths.size > 1
        new(paths.first)
      end

      def initialize(path = nil)
        @path = self.class.resolve_path(path)
      end

      # --- bases ---

      def base_list
        result = run('base', 'list', *JSON_FORMAT)
        list_of_hashes(result, 'bases', ['base', 'list'])
      end

      # The base as `base list` reports it.
      def base_create(name, os: nil, release: nil, mirror: nil, puppet_source: nil, server: nil, pe_ca_cert: nil)
        options = []
        options += ['--os', os.to_s] if os
        options += ['--release', release.to_s] if release
        options += ['--mirror', mirror.to_s] if mirror
        options += ['--puppet-source', puppet_source.to_s] if puppet_source
        options += ['--server', server.to_s] if server
        options += ['--pe-ca-cert', pe_ca_cert.to_s] if pe_ca_cert
        result = run('base', 'create', *options, '--', name)
        entity(result, 'base', name, ['base', 'create'])
      end

      def base_remove(name)
        run('base', 'remove', '--', name)
      end

      # --- clones ---

      def clone_list
        result = run('clone', 'list', *JSON_FORMAT)
        clones = list_of_hashes(result, 'clones', ['clone', 'list'])
        clones.each { |clone| check_clone(clone, ['clone', 'list']) }
      end

      # The load-shape flags of `clone create` and `clone configure`
      # (docs/PROTOCOL.md, "Load shape"), in the order they are passed. `shape`
      # holds the values as the helper takes them; the facts go as the path
      # of a file that holds them (`facts_file`).
      SHAPE_FLAGS = {
        run_mode: '--run-mode',
        runinterval: '--runinterval',
        splay: '--splay',
        phase_index: '--phase-index',
        phase_count: '--phase-count',
        phasing: '--phasing',
        memory_max: '--memory-max',
        cpu_quota: '--cpu-quota',
        tasks_max: '--tasks-max',
        facts_file: '--facts-file',
        generated_facts: '--generated-facts',
        churn_percent: '--churn-percent',
        apply_source: '--apply-source',
        agent_noop: '--agent-noop',
      }.freeze

      def self.shape_options(shape)
        flag_options(shape, SHAPE_FLAGS, 'load-shape')
      end

      # The flags of the settings given (nil: not given), in `flags`' order,
      # each followed by its value; a setting `flags` does not know is a bug.
      def self.flag_options(settings, flags, what)
        unknown = settings.keys - flags.keys
        raise ArgumentError, "unknown #{what} settings: #{unknown.join(', ')}" unless unknown.empty?

        flags.flat_map { |key, flag| settings[key].nil? ? [] : [flag, settings[key].to_s] }
      end

      # The clone as `clone list` reports it. The secrets are passed as paths of files
      # that hold them (PuppetX::CloneArmy::Secrets.with_files), never as
      # values.
      def clone_create(name, **request)
        result = run('clone', 'create', *self.class.create_arguments(name, **request))
        check_clone(entity(result, 'clone', name, ['clone', 'create']), ['clone', 'create'])
      end

      # Creates the clones of `requests` ({ name => clone_create's keywords },
      # none starting) with one `clone create-many`, so one daemon-reload for
      # them all; returns them as `clone list` reports them. The batch file
      # holds each clone's `clone create` arguments as a JSON line, in a
      # private directory removed when the helper has run.
      def clone_create_many(requests)
        lines = requests.map { |name, request| "#{JSON.generate(self.class.create_arguments(name, **request))}\n" }
        result = Secrets.with_files(batch: lines.join) { |files| run('clone', 'create-many', files[:batch]) }
        verb = ['clone', 'create-many']
        created = result['clones']
        malformed([path, *verb], 0, '"result"."clones" is not a list') unless created.is_a?(Array) && created.all?(Hash)
        clones_result({ 'clones' => created.map { |answer| answer['clone'] } }, requests.keys, verb)
      end

      # The arguments of `clone create` for one clone, its name last.
      def self.create_arguments(name, base:, server:, certname:, server_port: nil, start: false, shape: {},
                                root_password_hash_file: nil, challenge_password_file: nil, twin_file: nil)
        options = ['--base', base]
        options += ['--server', server] if server
        options += ['--server-port', server_port.to_s] if server_port
        options += ['--certname', certname]
        options += ['--twin-file', twin_file] if twin_file
        options += shape_options(shape)
        options += ['--root-password-hash-file', root_password_hash_file] if root_password_hash_file
        options += ['--challenge-password-file', challenge_password_file] if challenge_password_file
        options << '--start' if start
        [*options, '--', name.to_s]
      end

      # As clone_create; only the settings given change.
      def clone_configure(name, server: nil, server_port: nil, certname: nil, twin_file: nil, shape: {})
        options = []
        options += ['--server', server] if server
        options += ['--server-port', server_port.to_s] if server_port
        options += ['--certname', certname] if certname
        options += ['--twin-file', twin_file] if twin_file
        options += self.class.shape_options(shape)
        result = run('clone', 'configure', *options, '--', name)
        check_clone(entity(result, 'clone', name, ['clone', 'configure']), ['clone', 'configure'])
      end

      # The clones acted on, each as `clone list` reports it.
      # With a ramp_up (seconds), the helper starts them in waves spread
      # over it.
      def clone_start(*names, ramp_up: 0)
        options = ramp_up.to_i.positive? ? ['--ramp-up', ramp_up.to_i.to_s] : []
        clones_result(run('clone', 'start', *options, '--', *names), names, ['clone', 'start'])
      end

      # As clone_start.
      def clone_stop(*names)
        clones_result(run('clone', 'stop', '--', *names), names, ['clone', 'stop'])
      end

      def clone_remove(*names)
        run('clone', 'remove', '--', *names)
      end

      # The imported real nodes twins are made from (`twin list`): { 'identities' =>
      # [...], 'summary' => {...}, 'imported_from' => {...} }; no identities before an
      # import.
      def twin_list
        twins_result(run('twin', 'list'), ['twin', 'list'])
      end

      # Replaces the imported set with the nodes of `source`: { 'facts_dir' => DIR } or
      # { 'puppetdb' => URL, 'query' => PQL } with, optionally, 'ca_cert',
      # 'client_cert' and 'client_key'; the set as twin_list reports it.
      def twin_import(source)
        twins_result(run('twin', 'import', *self.class.twin_import_options(source)), ['twin', 'import'])
      end

      TWIN_IMPORT_FLAGS = {
        'facts_dir' => '--facts-dir',
        'puppetdb' => '--puppetdb',
        'query' => '--query',
        'ca_cert' => '--ca-cert',
        'client_cert' => '--client-cert',
        'client_key' => '--client-key',
      }.freeze

      def self.twin_import_options(source)
        flag_options(source, TWIN_IMPORT_FLAGS, 'twin import')
      end

      # Runs the helper with `args` and returns the `result` of its answer.
      def run(*args)
        argv = [path, *args.map(&:to_s)]
        unless File.file?(path) && File.executable?(path)
          raise HelperError.new(
            "the clone-army helper is not installed at #{path}: class clone_army installs it there " \
            "from the module's files/clone-army (in the release tarball; `make build` in a checkout) or from " \
            "its helper_source; or install it there (or name it with the resources' `helper`)",
            kind: 'helper-missing', argv: argv,
          )
        end

        Puppet.debug("clone_army: running #{argv.join(' ')}")
        result = execute(argv, args)
        parse(result.stdout, result.exitstatus, argv, result.stderr)
      end

      # The time limit for the call with `args` to the helper at `helper`
      # (CallLimits).
      def self.timeout_for(args, helper: nil, **options)
        CallLimits.seconds(args, helper: helper, **options)
      end

      # Reads one answer of the helper; public so the specs can feed it
      # captured output directly.
      def parse(stdout, exitstatus, argv, stderr = nil)
        document = Answer.document(stdout, exitstatus, argv, stderr)
        warn_from(document, argv)
        Answer.result(document, exitstatus, argv)
      rescue Answer::Refused => e
        raise HelperError.from(e)
      end

      private

      def execute(argv, args)
        timeout = self.class.timeout_for(args, helper: path)
        result = Runner.run(argv, timeout: timeout)
        result.stderr.each_line { |line| Puppet.debug("clone_army: #{line.chomp}") }
        result
      rescue Answer::Refused => e
        raise HelperError.from(e)
      rescue Runner::Timeout => e
        raise HelperError.new("#{describe(argv)} failed: #{e.message}; #{Runner::Timeout::WHAT_TO_CHECK} and apply again",
                              kind: 'helper-timeout', argv: argv)
      end

      # The helper's warnings (its stderr is only debug output here) as
      # Puppet warnings, so that a Puppet or PE user sees them.
      def warn_from(document, argv)
        Array(document['warnings']).each do |warning|
          Puppet.warning("#{describe(argv)}: #{warning}")
        end
      end

      def malformed(argv, exitstatus, what)
        raise HelperError.from(Answer.malformed(argv, exitstatus, what))
      end

      # docs/PROTOCOL.md shows `{"clone": <clone>}` for create and configure; a
      # helper may also answer with just the name. Either is accepted, as
      # long as it is the thing asked for.
      def entity(result, key, name, verb)
        value = result[key]
        return value if value.is_a?(Hash) && value['name'] == name

        malformed([path, *verb], 0, "\"result\".\"#{key}\" is not an object with the name #{name.inspect}: " +
                                    excerpt(value.to_json))
      end

      def list_of_hashes(result, key, verb)
        list = result[key]
        unless list.is_a?(Array) && list.all? { |item| item.is_a?(Hash) && item['name'].is_a?(String) }
          malformed([path, *verb], 0, "\"result\".\"#{key}\" is not a list of objects with a name")
        end
        list
      end

      # `clone start|stop` answer with the clones, every name asked for among
      # them.
      def twins_result(result, verb)
        identities = result['identities']
        unless identities.is_a?(Array) && identities.all? { |item| item.is_a?(Hash) && item['node'].is_a?(String) }
          malformed([path, *verb], 0, '"result"."identities" is not a list of objects with a node')
        end
        malformed([path, *verb], 0, '"result"."summary" is not an object') unless result['summary'].is_a?(Hash)
        result
      end

      def clones_result(result, names, verb)
        clones = result['clones']
        malformed([path, *verb], 0, '"result"."clones" is not a list') unless clones.is_a?(Array)
        answered = clones.map { |clone| answered_clone(clone, verb) }
        missing = names.map(&:to_s) - answered
        malformed([path, *verb], 0, "\"result\".\"clones\" lacks #{missing.join(', ')}") unless missing.empty?
        clones
      end

      # The name of one entry of a `clone start|stop` answer.
      def answered_clone(clone, verb)
        return check_clone(clone, verb)['name'] if clone.is_a?(Hash)

        malformed([path, *verb], 0, "\"result\".\"clones\" holds #{excerpt(clone.to_json)}, not a clone")
      end

      def check_clone(clone, verb)
        unless clone['name'].is_a?(String) && CLONE_STATES.include?(clone['state'])
          malformed([path, *verb], 0, "clone #{excerpt(clone.to_json)} lacks a name or a state (running|stopped)")
        end
        clone
      end

      def describe(argv)
        Answer.describe(argv)
      end

      def excerpt(text)
        Answer.excerpt(text)
      end
    end
  end
end
