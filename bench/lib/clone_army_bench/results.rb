# frozen_string_literal: true

require 'json'

module CloneArmyBench
  # One bench run's results: the scale it ran at and its figures, written as
  # <stamp>.json and the Markdown table <stamp>.md.
  module Results
    KEYS = ['key', 'label', 'value', 'unit', 'target', 'met', 'note'].freeze

    module_function

    # A figure; value is a number or nil, met true, false or nil (no target).
    def figure(key:, label:, value:, unit:, target:, met:, note: '')
      raise ArgumentError, "met must be true, false or nil, not #{met.inspect}" unless [true, false, nil].include?(met)
      raise ArgumentError, "value must be a number or nil, not #{value.inspect}" unless value.nil? || value.is_a?(Numeric)

      KEYS.zip([key, label, value, unit, target, met, note.to_s]).to_h
    end

    # A figure from the command line's words KEY LABEL VALUE UNIT TARGET MET [NOTE]:
    # VALUE is a JSON number or empty/null, MET true, false or null.
    def figure_from_words(words)
      key, label, value, unit, target, met, note = words
      figure(key: key, label: label, value: json_word(value, 'VALUE'), unit: unit, target: target,
             met: json_word(met, 'MET'), note: note)
    end

    def json_word(word, name)
      return nil if word.nil? || word.empty?

      JSON.parse(word)
    rescue JSON::ParserError
      raise ArgumentError, "#{name} must be a JSON number, true, false or null, not #{word.inspect}"
    end

    def document(started:, finished:, status:, scale:, figures:)
      { 'started' => started, 'finished' => finished, 'status' => status, 'scale' => scale, 'figures' => figures }
    end

    def json(doc)
      "#{JSON.pretty_generate(doc)}\n"
    end

    def markdown(doc)
      scale = doc['scale'].map { |k, v| "#{k}=#{v.is_a?(String) ? v : JSON.generate(v)}" }.join(', ')
      rows = doc['figures'].map { |f| row(f) }
      "# clone_army benchmark, #{doc['started']} (#{doc['status']})\n\nScale: #{scale}\n\n" \
        "| figure | value | target | met |\n| --- | --- | --- | --- |\n#{rows.join}"
    end

    def row(fig)
      label = fig['note'].to_s.empty? ? fig['label'] : "#{fig['label']} (#{fig['note']})"
      value = fig['value'].nil? ? '–' : "#{fig['value']} #{fig['unit']}"
      met = { true => 'yes', false => '**no**', nil => '–' }.fetch(fig['met'])
      "| #{label} | #{value} | #{fig['target']} | #{met} |\n"
    end
  end
end
