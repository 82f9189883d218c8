# frozen_string_literal: true

require 'json'

module PuppetX
  module CloneArmy
    # What every Bolt task of this module does with its input and output:
    # parameters as a JSON object on stdin, one JSON document (or a task's
    # own text) on stdout, and a parameter that does not fit, or the helper's
    # error, as Bolt's `_error` with kind `clone_army/<kind>` and the field it
    # names.
    module TaskIO
      # A parameter that does not fit, or a tool the task needs that is not
      # there.
      class ParameterError < StandardError
        attr_reader :field, :kind

        def initialize(field, message, kind: 'invalid-parameter')
          super(message)
          @field = field
          @kind = kind
        end
      end

      module_function

      # Reads the parameters from `input`, runs the block on them, prints what
      # it returns (a String as it is, anything else as JSON) to `output` and
      # returns the exit status the block gave, or 1 for a ParameterError.
      def run(input, output)
        result, exitstatus = begin
          yield read_params(input)
        rescue ParameterError => e
          [{ '_error' => { 'kind' => "clone_army/#{e.kind}", 'msg' => e.message,
                           'details' => { 'field' => e.field } } }, 1]
        end
        output.puts(result.is_a?(String) ? result : JSON.generate(result))
        exitstatus
      end

      # Bolt's `_error` for the helper's error `document` (docs/PROTOCOL.md):
      # its kind as `clone_army/<kind>`, its message, field and causes.
      def helper_error(document, exitstatus)
        error = document['error'].is_a?(Hash) ? document['error'] : {}
        {
          'kind' => "clone_army/#{error['kind'] || 'failed'}",
          'msg' => error['message'] || "clone-army failed (exit status #{exitstatus})",
          'details' => { 'field' => error['field'], 'causes' => error['causes'] || [], 'exitstatus' => exitstatus }.compact,
        }
      end

      # The parameters, without Bolt's own (`_noop`, `_task`, ...) and nulls.
      def read_params(input)
        text = input.read.to_s
        params = text.strip.empty? ? {} : JSON.parse(text)
        raise ParameterError.new('parameters', 'the parameters on stdin are not a JSON object') unless params.is_a?(Hash)

        params.reject { |key, value| key.start_with?('_') || value.nil? }
      rescue JSON::ParserError => e
        raise ParameterError.new('parameters', "the parameters on stdin are not JSON: #{e.message}")
      end
    end
  end
end
