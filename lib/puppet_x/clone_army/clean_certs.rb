# frozen_string_literal: true

require 'json'
require 'open3'
require_relative 'schema'
require_relative 'task_io'

module PuppetX
  module CloneArmy
    # The Bolt task clone_army::clean_certs, run on the Puppet Server (the CA):
    # forgets removed clones there. Their certificates are revoked and their
    # files removed with `puppetserver ca clean --certname A --certname B`,
    # and, where PuppetDB is in use, their nodes deactivated with
    # `puppet node deactivate A B`. Each certname's outcome is read from what
    # the commands print about it.
    #
    # A load host keeps each removed clone's SSL directory, so that the clone
    # made again under its certname has its certificate again (README,
    # "Certificates"). Once the CA has cleaned a certname, that directory
    # holds a revoked certificate: forget it on the load host too
    # (`clone-army ssl forget CERTNAME...`), and a clone made again under the
    # certname gets a new certificate.
    #
    # Plain Ruby and the json library only, as the other tasks: it runs with
    # whatever Ruby the server has, without Puppet loaded.
    module CleanCerts
      # Certnames as the helper accepts them (the schema's hostname rule).
      CERTNAME = Schema.anchored(Schema.fetch('names', 'hostname', 'pattern'))
      CERTNAME_MAX = Schema.fetch('names', 'hostname', 'max_length')
      CERTNAME_RULE = Schema.fetch('names', 'hostname', 'rule')

      # The all-in-one packages' (Puppet's, OpenVox's, PE's) paths first, then
      # Debian's and Ubuntu's packages'.
      PUPPETSERVER = ['/opt/puppetlabs/bin/puppetserver', '/usr/bin/puppetserver'].freeze
      PUPPET = ['/opt/puppetlabs/bin/puppet', '/usr/bin/puppet'].freeze
      # A server that stores in PuppetDB has its terminus configured here.
      PUPPETDB_CONF = ['/etc/puppetlabs/puppet/puppetdb.conf', '/etc/puppet/puppetdb.conf'].freeze

      # The test hook: a directory the paths above are looked up under (a
      # stand-in puppetserver and puppet). An environment variable, never a
      # parameter: the task runs as root.
      TEST_ROOT_ENV = 'CLONE_ARMY_TASK_ROOT'

      # A parameter that does not fit, or a tool that is not there.
      ParameterError = TaskIO::ParameterError

      module_function

      # The certnames, checked and without repeats.
      def certnames(params)
        value = params['certnames']
        good = value.is_a?(Array) && !value.empty? &&
               value.all? { |name| name.is_a?(String) && name.length <= CERTNAME_MAX && name.match?(CERTNAME) }
        unless good
          raise ParameterError.new('certnames', "certnames must be a non-empty array of certnames, each #{CERTNAME_RULE}; " \
                                                "got #{value.inspect}")
        end
        value.uniq
      end

      # Whether to deactivate the nodes in PuppetDB: as given, else whether the
      # server is configured for PuppetDB.
      def deactivate?(params)
        value = params['deactivate']
        return PUPPETDB_CONF.any? { |path| File.file?(on_host(path)) } if value.nil?
        return value if [true, false].include?(value)

        raise ParameterError.new('deactivate', "deactivate must be true or false; got #{value.inspect}")
      end

      # The first of `candidates` that is an executable file.
      def tool(field, candidates)
        found = candidates.map { |path| on_host(path) }.find { |path| File.file?(path) && File.executable?(path) }
        return found if found

        raise ParameterError.new(field, "#{field} is not installed here (looked for #{candidates.join(', ')}); " \
                                        'run the task on the Puppet Server that is the CA', kind: 'tool-missing')
      end

      def on_host(path)
        root = ENV.fetch(TEST_ROOT_ENV, nil)
        root ? File.join(root, path) : path
      end

      # --- the commands (argv; never a shell) ---

      def clean_argv(puppetserver, certnames)
        [puppetserver, 'ca', 'clean', *certnames.flat_map { |name| ['--certname', name] }]
      end

      def deactivate_argv(puppet, certnames)
        [puppet, 'node', 'deactivate', *certnames]
      end

      # Runs argv and returns [stdout and stderr together, exit status]: the
      # CA tool says what it did on stdout and what failed on stderr.
      def run(argv)
        output, status = Open3.capture2e(*argv)
        [output, status.exitstatus]
      end

      # --- reading what they said, per certname ---

      # `puppetserver ca clean`: "Cleaned files related to X" (revoked, or
      # already revoked, and removed), "Could not find files to clean for X"
      # (nothing to clean: the CA has no such certname, which is what was
      # wanted), anything else for X failed. Puppet Server 8 says "Cleaned"
      # again for a certname cleaned before: it revokes it anew from its
      # inventory.
      def ca_outcome(output, certname)
        name = Regexp.escape(certname)
        return 'cleaned' if output.match?(%r{^\s*Cleaned files related to #{name}\s*$})
        return 'absent' if output.match?(%r{Could not find files to clean for #{name}\s*$})

        'failed'
      end

      # `puppet node deactivate`: "Submitted 'deactivate node' for X with UUID ...".
      def puppetdb_outcome(output, exitstatus, certname)
        name = Regexp.escape(certname)
        exitstatus.zero? && output.match?(%r{for #{name} with UUID}) ? 'deactivated' : 'failed'
      end

      # --- the task ---

      def task(params)
        names = certnames(params)
        deactivate = deactivate?(params)
        commands = [clean_argv(tool('puppetserver', PUPPETSERVER), names)]
        commands << deactivate_argv(tool('puppet', PUPPET), names) if deactivate
        ca_answer, db_answer = commands.map { |argv| run(argv) }
        result = outcomes(names, ca_answer, db_answer)
        document = { 'certnames' => result, 'commands' => commands.map { |argv| shown(argv) }, 'changed' => changed?(result) }
        failed = result.select { |_, outcome| outcome.value?('failed') }.keys
        return [document, 0] if failed.empty?

        [document.merge('_error' => failure(failed, ca_answer, db_answer || ['', 0])), 1]
      end

      def changed?(result)
        result.values.any? { |outcome| outcome['ca'] == 'cleaned' || outcome['puppetdb'] == 'deactivated' }
      end

      # Each certname's outcome at the CA and in PuppetDB ('skipped' when not
      # asked), from [output, exit status] of each command.
      def outcomes(names, ca_answer, db_answer)
        names.to_h do |name|
          [name, { 'ca' => ca_outcome(ca_answer.first, name),
                   'puppetdb' => db_answer ? puppetdb_outcome(db_answer.first, db_answer.last, name) : 'skipped' }]
        end
      end

      # A command as the answer shows it: the program's name and its arguments.
      def shown(argv)
        [File.basename(argv.first), *argv.drop(1)].join(' ')
      end

      def failure(failed, (ca_output, ca_status), (db_output, db_status))
        { 'kind' => 'clone_army/clean-failed',
          'msg' => "could not clean #{failed.join(', ')} (see details for what the commands said)",
          'details' => { 'failed' => failed,
                         'puppetserver_ca' => { 'exitstatus' => ca_status, 'output' => ca_output[-4000..] || ca_output },
                         'puppet_node' => { 'exitstatus' => db_status, 'output' => db_output[-4000..] || db_output } } }
      end

      # Reads the parameters from `input`, runs the task, prints its JSON to
      # `output` and returns the exit status.
      def main(input = $stdin, output = $stdout)
        TaskIO.run(input, output) { |params| task(params) }
      end
    end
  end
end
