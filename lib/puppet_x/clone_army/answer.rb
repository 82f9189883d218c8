# frozen_string_literal: true

require 'json'

module PuppetX
  module CloneArmy
    # Reads one answer of the `clone-army` helper (docs/PROTOCOL.md): the
    # single JSON document it prints on stdout. Anything but a well-formed
    # answer of this module's protocol version that says `ok` is a Refused: a
    # non-zero exit, `ok: false`, an empty or malformed answer, or another
    # protocol version. A malformed answer is never taken to mean "nothing
    # there".
    #
    # Plain Ruby and the json library only, so that both the providers
    # (through Helper) and the Bolt tasks (through Task, without Puppet
    # loaded) hold the helper to the same protocol.
    module Answer
      PROTOCOL_VERSION = 2

      # What a failed call is described by, for Refused and for the
      # providers' HelperError alike: the kind (docs/PROTOCOL.md or the wrapper's
      # own), the field at fault, the causes, the argv run and its exit status.
      module Failure
        attr_reader :kind, :field, :causes, :argv, :exitstatus

        # The same fields as keyword arguments, to raise another error with.
        def failure
          { kind: kind, field: field, causes: causes, argv: argv, exitstatus: exitstatus }
        end

        private

        def describe_failure(kind:, argv:, exitstatus: nil, field: nil, causes: [])
          @kind = kind
          @field = field
          @causes = causes
          @argv = argv
          @exitstatus = exitstatus
        end
      end

      # An answer that is not a success. `kind` is the helper's own error
      # kind (docs/PROTOCOL.md) when it answered `ok: false` with a well-formed
      # error, or one of `malformed-output`, `protocol-mismatch`; `document`
      # is the answer when it was a JSON object.
      class Refused < StandardError
        include Failure
        attr_reader :document

        def initialize(message, kind:, argv:, exitstatus:, field: nil, causes: [], document: nil, helper_failure: false)
          super(message)
          describe_failure(kind: kind, argv: argv, exitstatus: exitstatus, field: field, causes: causes)
          @helper_failure = helper_failure
          @document = document
        end

        # Whether the helper itself failed, as opposed to giving no answer of
        # the protocol.
        def helper_failure?
          @helper_failure
        end
      end

      module_function

      # The answer's JSON object, of this module's protocol version. `stderr`,
      # where the caller has it, says why there is none: the helper prints a
      # command line it refuses on stderr alone.
      def document(stdout, exitstatus, argv, stderr = nil)
        document = decode(stdout, exitstatus, argv, stderr)
        version = document['protocol']
        return document if version == PROTOCOL_VERSION

        raise Refused.new(protocol_mismatch(version, argv), kind: 'protocol-mismatch', argv: argv,
                                                            exitstatus: exitstatus, document: document)
      end

      # The `result` of a `document`; a Refused for a failure or an answer
      # that says neither.
      def result(document, exitstatus, argv)
        case document['ok']
        when false then raise failure(document, exitstatus, argv)
        when true then success(document, exitstatus, argv)
        else raise malformed(argv, exitstatus, '"ok" is neither true nor false', document)
        end
      end

      # Which side to upgrade when the helper speaks another protocol: the
      # module and its helper come from one release (the module's
      # files/clone-army, or helper_source and helper_checksum).
      def protocol_advice(version)
        if !version.is_a?(Integer)
          "that is not an answer of a clone-army helper of any release; install the helper of this module's " \
            'release (its files/clone-army, or helper_source and helper_checksum of class clone_army)'
        elsif version > PROTOCOL_VERSION
          "the helper is newer than the module: upgrade the clone_army module to the helper's release, or install " \
            "the helper of this module's release (its files/clone-army, or helper_source and helper_checksum)"
        else
          "the helper is older than the module: upgrade the helper to this module's release (the module's " \
            'files/clone-army, or helper_source and helper_checksum of that release)'
        end
      end

      # The Refused for an answer that is not what the protocol says.
      def malformed(argv, exitstatus, what, document = nil)
        Refused.new("#{describe(argv)} gave a malformed answer (exit status #{exitstatus.inspect}): #{what}",
                    kind: 'malformed-output', argv: argv, exitstatus: exitstatus, document: document)
      end

      # The call as people know it: `clone-army clone list`.
      def describe(argv)
        ['clone-army', *argv.drop(1)].join(' ')
      end

      def excerpt(text)
        text.length > 200 ? "#{text[0, 200]}..." : text
      end

      def protocol_mismatch(version, argv)
        "#{describe(argv)} answered in protocol version #{version.inspect}; this module speaks version " \
          "#{PROTOCOL_VERSION}: #{protocol_advice(version)} (helper: #{argv.first})"
      end

      def decode(stdout, exitstatus, argv, stderr = nil)
        text = stdout.to_s.strip
        if text.empty?
          said = stderr.to_s.lines.map(&:strip).reject(&:empty?).last
          raise malformed(argv, exitstatus, said ? "no output on stdout; it said: #{excerpt(said.dump[1..-2])}" : 'no output on stdout')
        end

        document = begin
          JSON.parse(text)
        rescue JSON::ParserError => e
          raise malformed(argv, exitstatus, "not JSON (#{e.message.lines.first.to_s.strip}): #{excerpt(text)}")
        end
        raise malformed(argv, exitstatus, "not a JSON object: #{excerpt(text)}") unless document.is_a?(Hash)

        document
      end

      def success(document, exitstatus, argv)
        raise malformed(argv, exitstatus, "\"ok\": true with exit status #{exitstatus}", document) unless exitstatus.to_i.zero?

        result = document['result']
        raise malformed(argv, exitstatus, '"result" is missing or not an object', document) unless result.is_a?(Hash)

        result
      end

      def failure(document, exitstatus, argv)
        error = document['error']
        unless error.is_a?(Hash) && error['kind'].is_a?(String) && error['message'].is_a?(String)
          return malformed_error(error, exitstatus, argv, document)
        end

        causes = Array(error['causes']).map(&:to_s)
        message = "#{describe(argv)} failed [#{error['kind']}]: #{error['message']}"
        message += " (field: #{error['field']})" if error['field']
        message += "; caused by: #{causes.join('; ')}" unless causes.empty?
        Refused.new(message, kind: error['kind'], field: error['field'], causes: causes,
                             argv: argv, exitstatus: exitstatus, document: document, helper_failure: true)
      end

      def malformed_error(error, exitstatus, argv, document)
        Refused.new("#{describe(argv)} failed (exit status #{exitstatus}) with a malformed error: #{excerpt(error.to_json)}",
                    kind: 'malformed-output', argv: argv, exitstatus: exitstatus, document: document)
      end
    end
  end
end
